package dockerbox

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sync"

	"github.com/altairalabs/promptkit-sandbox/internal/tether"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A docker_run container runs the command under the engine's init
// (docker-init, which is tini) unless `init: false`: as PID 1 the command
// would ignore every signal it has no handler for (`kill -9 $$` would do
// nothing, nor would a SIGTERM), and nobody would reap its orphans.
//
// The engine then no longer fails the start of a command that is not in
// the image: the init starts, cannot exec the command, says so on stderr
// in one line and exits 127 (126 when it is not executable). That line
// is the init's, not the hook's, and the call is a could-not-start error
// as it is without an init: initFilter holds back the start of stderr
// while it may be that line. The tether (tether.go), which runs the
// command whether or not there is an init, reports a command it cannot
// run the same way, in a line of its own.

// initExecFailure is the line tini, or the tether, writes when its exec
// of the command fails (and then exits 127, or 126).
var initExecFailure = regexp.MustCompile(`^(?:\[FATAL tini \(\d+\)\] |` + regexp.QuoteMeta(tether.FailurePrefix) + `)(exec .* failed: .*)\n$`)

// initPrefixes are how the lines start.
var initPrefixes = []string{"[FATAL tini (", tether.FailurePrefix}

// initExecFailed reports whether a command that exited with code and
// wrote stderr was never run: the init could not exec it. msg is the
// init's reason.
func initExecFailed(code int, stderr []byte) (msg string, ok bool) {
	if code != 126 && code != 127 {
		return "", false
	}
	m := initExecFailure.FindSubmatch(stderr)
	if m == nil {
		return "", false
	}
	return string(m[1]), true
}

// initStartError is the error for a command the init could not exec.
func initStartError(what, msg string) error {
	return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: cannot run it in the container: %s", what, msg), nil)
}

// initFilter passes stderr on, except for its first line while that may
// be the init's exec failure: those bytes wait until they cannot be
// (Write), or until the call has ended (Failure, Flush).
type initFilter struct {
	mu      sync.Mutex
	w       io.Writer
	held    []byte
	passing bool // the stream is the hook's: write straight through
}

func newInitFilter(w io.Writer) *initFilter { return &initFilter{w: w} }

func (f *initFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.passing {
		return f.w.Write(p)
	}
	f.held = append(f.held, p...)
	if f.mayBeFailure() {
		return len(p), nil
	}
	f.passing = true
	held := f.held
	f.held = nil
	if _, err := f.w.Write(held); err != nil {
		return 0, err
	}
	return len(p), nil
}

// mayBeFailure reports whether what is held can still be, or is, the
// init's exec failure line and nothing more.
func (f *initFilter) mayBeFailure() bool {
	if len(f.held) > 4096 || !slices.ContainsFunc(initPrefixes, func(prefix string) bool {
		n := min(len(f.held), len(prefix))
		return bytes.Equal(f.held[:n], []byte(prefix[:n]))
	}) {
		return false
	}
	if i := bytes.IndexByte(f.held, '\n'); i >= 0 {
		return i == len(f.held)-1 && initExecFailure.Match(f.held)
	}
	return true
}

// Failure reports the init's reason when the command, which exited with
// code, never ran; the held line is then dropped. Otherwise it passes
// on what it held.
func (f *initFilter) Failure(code int) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.passing {
		if msg, ok := initExecFailed(code, f.held); ok {
			f.held = nil
			return msg, true
		}
	}
	f.flushLocked()
	return "", false
}

// Flush passes on what is held: the call ended before the line did.
func (f *initFilter) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushLocked()
}

func (f *initFilter) flushLocked() {
	f.passing = true
	if len(f.held) > 0 {
		_, _ = f.w.Write(f.held)
		f.held = nil
	}
}
