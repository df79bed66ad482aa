package diagram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
)

// ErrImport is why a D2 import ("...@file") fails: the source may name
// no file at all, in the workspace or out of it. The helper's error
// comes back as its text.
var ErrImport = errors.New("D2 imports are not allowed: put everything in one source")

// Helper is the name of the executable that renders D2 (package
// d2render), installed next to sandboxd's own: D2, its fonts and the
// highlighting it links cost every start of a binary that holds them
// tens of milliseconds of package initialisers, which sandboxd's start
// should not pay for a tool most sessions never call.
const Helper = "sandboxd-diagram"

// HelperNextTo is the Helper next to the executable exe, or "" when
// there is none (D2 is then refused as unsupported).
func HelperNextTo(exe string) string {
	if exe == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(exe), Helper)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}

// HoldHelper opens the executable at path (unless it is "") and
// returns a name of it that any child of this process can execute for
// as long as this process lives: /proc/self/fd/N, a magic link that,
// like /proc/self/exe, skips the walk through directories a child
// running as the agent's user (--run-as) may not search (sandboxd's own
// may be root's, 0700), and names the file that was there when sandboxd
// started whatever now lies at path. The descriptor is close-on-exec:
// the kernel resolves the name before it closes it, so the helper runs
// but holds nothing of sandboxd's. It returns path when the file cannot
// be held so.
func HoldHelper(path string) string {
	if path == "" {
		return ""
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return path
	}
	held := "/proc/self/fd/" + strconv.Itoa(fd)
	if _, err := os.Stat(held); err != nil {
		_ = unix.Close(fd)
		return path
	}
	return held
}

// ChildD2 names the D2 renderer among the functions a child runs (see
// child.Serve); the Helper registers it.
const ChildD2 = "d2"

// D2Job is what the D2 child is given on its stdin, as JSON.
type D2Job struct {
	Source string
	Shapes int // the shapes limit
}

// renderD2 renders source in a child process (the Helper, see
// child.Serve): D2's compiler takes time cubic in the source's nesting
// (a thousand nested maps, four seconds; four thousand, six minutes),
// and its layout runs dagre in a JavaScript interpreter that takes no
// context, where a dense graph of fifty shapes can keep it busy for
// minutes. A process can be killed at the time limit, when the call is
// cancelled and when sandboxd shuts down; a goroutine could only be
// abandoned, still burning a core.
func (r *Renderer) renderD2(ctx context.Context, source string) (*Image, error) {
	if err := checkNesting(D2, source, r.Limits.Nesting); err != nil {
		return nil, err
	}
	job, err := json.Marshal(D2Job{Source: source, Shapes: r.Limits.Shapes})
	if err != nil {
		return nil, err
	}
	svg, err := child.Call(ctx, r.Helper, ChildD2, childLimits(r.Limits), job)
	switch {
	case errors.Is(err, child.ErrNoExecutable):
		return nil, fmt.Errorf("d2: %w: %s is not installed next to sandboxd", ErrUnsupported, Helper)
	case err != nil:
		return nil, fmt.Errorf("d2: %w", limitError(err, r.Limits))
	}
	return &Image{Format: SVG, Data: svg}, nil
}
