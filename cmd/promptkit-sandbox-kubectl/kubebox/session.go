package kubebox

import (
	"context"
	"io"
	"sync"

	"github.com/altairalabs/promptkit-sandbox/shared/remoteproc"
)

// session is one exec of the wrapper in a target: the stream open, the
// wrapper waiting on stdin for the call it will run. A warm session is
// started ahead of its call; a cold one by the call itself.
type session struct {
	t              target
	f              *remoteproc.Filter
	stdout, stderr *lateWriter
	stdin          *io.PipeWriter
	cancel         context.CancelFunc

	done chan struct{} // the exec has returned
	code int           // valid once done
	err  error         // valid once done

	closeStdin sync.Once
}

// startSession opens an exec stream running the wrapper in t. The stream
// has a context of its own: it outlives the call's on a timeout until the
// wrapper's PID has come through it and the remote processes are killed.
func (s *Sandbox) startSession(t target) *session {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	ss := &session{t: t, stdout: &lateWriter{}, stderr: &lateWriter{}, stdin: pw, cancel: cancel, done: make(chan struct{})}
	ss.f = remoteproc.NewFilter(ss.stdout, ss.stderr, s.set.transport == TransportCLI)
	go func() {
		defer close(ss.done)
		defer cancel() // the stream is over: release its context
		ss.code, ss.err = s.c.exec(ctx, t, remoteproc.Argv(), pr, ss.f.Stdout(), ss.f.Stderr())
		// A write to the wrapper's stdin after the stream has ended
		// fails instead of waiting for a reader that is gone.
		_ = pr.CloseWithError(io.ErrClosedPipe)
		ss.f.Close()
	}()
	return ss
}

// send gives the wrapper its call: the preamble and stdin, then end of
// file. It does not wait for the remote side to read it.
func (ss *session) send(input []byte) {
	go func() {
		_, _ = ss.stdin.Write(input)
		ss.closeStdin.Do(func() { _ = ss.stdin.Close() })
	}()
}

// ended reports whether the stream has ended.
func (ss *session) ended() bool {
	select {
	case <-ss.done:
		return true
	default:
		return false
	}
}

// abandon ends a session that never got its call: the wrapper reads end
// of file and exits without running anything; the stream then ends.
func (ss *session) abandon() {
	ss.closeStdin.Do(func() { _ = ss.stdin.Close() })
}

// lateWriter holds what is written to it until bind names its writer.
// Before its call a wrapper writes nothing but its PID line (which the
// filter takes), so what it holds is small: a runtime's message at most,
// and it is bounded.
type lateWriter struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte
}

func (l *lateWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w != nil {
		return l.w.Write(p)
	}
	if room := maxLateHeld - len(l.held); room > 0 {
		l.held = append(l.held, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

const maxLateHeld = 64 << 10

func (l *lateWriter) bind(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) > 0 {
		_, _ = w.Write(l.held)
	}
	l.w, l.held = w, nil
}
