package remoteproc

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
)

// session is one exec of the wrapper in the target: the stream open, the
// wrapper waiting on stdin for the call it will run. A warm session is
// started ahead of its call; a cold one by the call itself.
type session struct {
	f              *Filter
	stdout, stderr *warmpool.Held
	stdin          *io.PipeWriter
	cancel         context.CancelFunc

	issued chan struct{} // the start gate let the exec go to the target
	done   chan struct{} // the exec has returned (or never went)
	code   int           // valid once done
	err    error         // valid once done

	closeStdin sync.Once
	sent       bool // the call went to the wrapper (runIn's own)

	// kill kills the wrapper's tree by its PID in the target (the
	// engine's kill script): Discard's backstop for a stream that had to
	// be cut or failed, after which the wrapper may still be waiting
	// there on a stdin its runtime never closed.
	kill func(pid int) bool
}

// maxHeldBeforeCall bounds what a session keeps before its call claims
// it: a wrapper writes nothing but its PID line (which the filter takes)
// before its call, so this is a runtime's message at most.
const maxHeldBeforeCall = 64 << 10

// startSession opens an exec stream running the wrapper. The stream has
// a context of its own: on a timeout it outlives the call's until the
// wrapper's PID has come through it and the remote processes are killed.
func (e *Engine) startSession() *session {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	ss := &session{
		stdout: warmpool.NewHeld(maxHeldBeforeCall), stderr: warmpool.NewHeld(maxHeldBeforeCall),
		stdin: pw, cancel: cancel, issued: make(chan struct{}), done: make(chan struct{}),
		kill: e.kill,
	}
	ss.f = NewFilter(ss.stdout, ss.stderr, e.opts.CLI)
	go func() {
		defer close(ss.done)
		defer cancel() // the stream is over: release its context
		release, err := gate.enter(ctx, e.gateKey)
		if err != nil {
			// Cut while it waited: nothing went to the target.
			ss.err = err
			_ = pr.CloseWithError(io.ErrClosedPipe)
			ss.f.Close()
			return
		}
		close(ss.issued)
		execDone := make(chan struct{})
		go func() {
			// The slot is the start's: once the wrapper runs, the next
			// exec may start.
			select {
			case <-ss.f.Started():
			case <-execDone:
			}
			release()
		}()
		ss.code, ss.err = e.t.Exec(ctx, Argv(), pr, ss.f.Stdout(), ss.f.Stderr())
		close(execDone)
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

// Warm waits until the wrapper runs and waits for its call, so a session
// in the pool is one a call gets at once.
func (ss *session) Warm(ctx context.Context) error {
	select {
	case <-ss.f.Started():
		return nil
	case <-ss.done:
		return errEndedEarly
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stale reports a session whose stream ended before its call (its
// container stopped, its pod went away, the connection was cut).
func (ss *session) Stale() bool { return ss.ended() }

// Discard ends a session that never got its call: the wrapper reads end
// of file and exits without running anything, and the stream then ends;
// one that does not is cut, and the wrapper it ran is killed.
func (ss *session) Discard() {
	ss.closeStdin.Do(func() { _ = ss.stdin.Close() })
	select {
	case <-ss.done:
	case <-time.After(StreamGrace):
		ss.cancel()
		<-ss.done
	}
	if pid := ss.f.PID(); pid > 0 && ss.err != nil {
		// The wrapper ran, and its stream did not end as a wrapper that
		// read end of file ends it: it was cut, or failed. Whether the
		// runtime closed the wrapper's stdin then is the runtime's
		// business; that nothing is left is ours.
		ss.kill(pid)
	}
}

// errEndedEarly is a warm session whose stream ended before its wrapper
// reported.
var errEndedEarly = errors.New("the exec session ended before its wrapper ran")
