package symbols

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ctagsArgs are given to every ctags run: no option files (a workspace's
// .ctags.d must not change what runs), JSON with line numbers, long kind
// names and signatures but no search patterns (they would double the
// output), unsorted (we sort what we show), links not followed, the file
// list on stdin. TypeScript's other endings are mapped in, as ctags 5.9
// knows only .ts; JavaScript's .cjs likewise.
var ctagsArgs = []string{
	"--options=NONE", "--output-format=json", "--fields=+nKS-P", "--sort=no", "--links=no",
	"--languages=Go,Python,Rust,TypeScript,JavaScript",
	"--map-TypeScript=+.tsx", "--map-TypeScript=+.mts", "--map-TypeScript=+.cts", "--map-JavaScript=+.cjs",
	"-f", "-", "-L", "-",
}

// Limits on one ctags run and what is kept of it.
const (
	maxSignature   = 300
	maxName        = 300
	maxSymsPerFile = 10000
	maxLine        = 64 << 10 // a longer JSON line is dropped
)

// tag is one line of ctags' JSON output.
type tag struct {
	Type      string `json:"_type"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Kind      string `json:"kind"`
	Signature string `json:"signature"`
	Scope     string `json:"scope"`
	ScopeKind string `json:"scopeKind"`
}

// ErrOutputCapped says a ctags run printed more than it may.
var ErrOutputCapped = errors.New("ctags printed more than the output cap")

// ctagsRun is how ctags is run.
type ctagsRun struct {
	bin       string
	dir       string              // the workspace, where the paths given are relative to
	cred      *syscall.Credential // the user it runs as; nil: ours
	env       []string            // its environment; nil: ours
	timeout   time.Duration
	maxOutput int
}

// runCtags reads the symbols of files (paths relative to c.dir) with one
// ctags run, returning them by path. It kills ctags' process group when
// ctx ends, the timeout passes or the output passes maxOutput bytes.
// ctags is started as c.cred directly: it starts nothing, and sandboxd,
// root when it gives a credential, can still kill the group.
func runCtags(ctx context.Context, c ctagsRun, files []string) (map[string][]Symbol, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, ctagsArgs...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	cmd.Stdin = strings.NewReader(fileList(files))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("ctags: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting ctags: %w", err)
	}
	syms, readErr := readTags(out, c.maxOutput)
	if readErr != nil {
		_ = cmd.Cancel() // stop it printing; Wait reaps it
	}
	werr := cmd.Wait()
	switch {
	case readErr != nil:
		return nil, readErr
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("ctags timed out after %s on %d files and was killed", c.timeout, len(files))
		}
		return nil, ctx.Err()
	case werr != nil:
		return nil, fmt.Errorf("ctags: %w: %s", werr, firstLine(stderr.String()))
	}
	return syms, nil
}

// fileList is files as ctags reads them with -L: one a line, a relative
// path given as "./" and the path. ctags takes a line that starts with
// "-" for an option (--exclude, --options=FILE), and the file names are
// the agent's to choose. A name holding a newline would be two lines: it
// is left out, and so has no symbols.
func fileList(files []string) string {
	var b strings.Builder
	for _, f := range files {
		if strings.Contains(f, "\n") {
			continue
		}
		if !strings.HasPrefix(f, "/") {
			b.WriteString("./")
		}
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return b.String()
}

// readTags reads ctags' JSON lines, keeping the tags of the kinds we
// report.
func readTags(r interface{ Read([]byte) (int, error) }, maxOutput int) (map[string][]Symbol, error) {
	syms := map[string][]Symbol{}
	br := bufio.NewReaderSize(r, 64<<10)
	read := 0
	for {
		line, err := br.ReadSlice('\n')
		read += len(line)
		if read > maxOutput {
			return nil, ErrOutputCapped
		}
		for errors.Is(err, bufio.ErrBufferFull) { // too long to be a tag we keep
			line = nil
			var more []byte
			more, err = br.ReadSlice('\n')
			if read += len(more); read > maxOutput {
				return nil, ErrOutputCapped
			}
		}
		if len(line) > 0 && len(line) <= maxLine {
			addTag(syms, line)
		}
		if err != nil {
			return syms, nil
		}
	}
}

func addTag(syms map[string][]Symbol, line []byte) {
	var t tag
	if json.Unmarshal(line, &t) != nil || t.Type != "tag" || t.Name == "" || t.Path == "" {
		return
	}
	kind, ok := ctagsKind(t.Kind, t.ScopeKind)
	path := strings.TrimPrefix(t.Path, "./") // as fileList gave it
	if !ok || len(syms[path]) >= maxSymsPerFile {
		return
	}
	syms[path] = append(syms[path], newSymbol(t, kind))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}
