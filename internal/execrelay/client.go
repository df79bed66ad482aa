package execrelay

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Exit statuses exec answers with itself when its serve stops answering
// mid-call, as timeout(1) and env(1) do.
const (
	ExitTimeout = 124
	ExitSandbox = 125
)

// Call is one exec call to run through the serve on Socket.
type Call struct {
	Socket  string
	Request Request
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	// Prog prefixes exec's own messages ("promptkit-sandbox: exec").
	Prog string
	// Start is when exec started; AnswerTimeout counts from it.
	Start time.Time
}

// Result is how a Call ended.
type Result struct {
	// Handled says the serve took the call: Code is exec's exit status,
	// and whatever the call had to say is written. Otherwise nothing
	// was written, stdin is unread, and Err says why the serve did not
	// take it.
	Handled bool
	Code    int
	Err     error
}

// Stalled says a serve was there and did not answer within
// AnswerTimeout.
func (r Result) Stalled() bool { return errors.Is(r.Err, ErrNotAnswering) }

// ErrNotAnswering is a serve that did not answer within AnswerTimeout.
var ErrNotAnswering = errors.New("did not answer")

// errHungUp is a serve that closed the connection before answering: a
// serve of an older relay, or one that is stopping.
var errHungUp = errors.New("closed the connection without answering (a serve of another version?)")

// Run runs the call through the serve. SIGINT and SIGTERM are passed on
// to the serve as a Cancel, and exec ends as the serve says; before the
// serve has answered, they end the call with ExitInterrupted.
func (c *Call) Run() Result {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	answerBy := c.Start.Add(AnswerTimeout)
	conn, err := dial(c.Socket, answerBy)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return Result{Err: ErrNotAnswering}
		}
		return Result{Err: err}
	}
	defer func() { _ = conn.Close() }()
	r := &relay{call: c, conn: conn, w: NewWriter(conn)}
	done := make(chan struct{})
	defer close(done)
	go r.passSignals(sigs, done)

	conn.until(answerBy)
	req := c.Request.marshal()
	hello := append(appendHeader([]byte(Magic), FrameRequest, len(req)), req...)
	if _, err := conn.Write(hello); err != nil {
		return r.unanswered(err)
	}
	typ, payload, buf, err := ReadFrame(conn, nil)
	if err != nil {
		return r.unanswered(err)
	}
	r.buf = buf
	if !r.answer() {
		return r.interrupted()
	}
	conn.until(time.Time{})
	return Result{Handled: true, Code: r.run(typ, payload)}
}

// ExitInterrupted is exec's status when a signal ended the call, as a
// shell reports a command ended by Ctrl-C.
const ExitInterrupted = 130

// passSignals passes SIGINT and SIGTERM on to the serve once it has
// answered; before that, a signal ends the wait for its answer.
func (r *relay) passSignals(sigs <-chan os.Signal, done <-chan struct{}) {
	for {
		select {
		case <-sigs:
		case <-done:
			return
		}
		r.mu.Lock()
		answered := r.answered
		r.signalled = !answered
		r.mu.Unlock()
		if answered {
			_ = r.w.Frame(FrameCancel, nil)
		} else {
			r.conn.hangUp()
		}
	}
}

// answer marks the serve answered, unless a signal came first.
func (r *relay) answer() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answered = !r.signalled
	return r.answered
}

// unanswered is the Result of a serve that failed before its first
// frame: nothing was written, and the caller may run the call cold.
func (r *relay) unanswered(err error) Result {
	r.mu.Lock()
	signalled := r.signalled
	r.mu.Unlock()
	switch {
	case signalled:
		return r.interrupted()
	case errors.Is(err, os.ErrDeadlineExceeded):
		return Result{Err: ErrNotAnswering}
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return Result{Err: errHungUp}
	}
	return Result{Err: err}
}

// interrupted is the Result of a signal before the serve answered: the
// serve, seeing exec go, drops the call.
func (r *relay) interrupted() Result {
	r.say("interrupted before the serve on " + r.call.Socket + " answered")
	return Result{Handled: true, Code: ExitInterrupted}
}

// relay is a call the serve has answered.
type relay struct {
	mu        sync.Mutex
	answered  bool // the serve's first frame came: signals go to it
	signalled bool // a signal came before it

	call   *Call
	conn   *conn
	w      *Writer
	buf    []byte
	accept *Accept
	// lastFrame and deadline are when the serve was last heard from and
	// when the Exit is due (zero: no due time yet).
	lastFrame, deadline time.Time
}

// run reads the serve's frames, the first of which is typ and payload,
// until its Exit, and returns exec's exit status.
func (r *relay) run(typ byte, payload []byte) int {
	for {
		r.lastFrame = time.Now()
		switch typ {
		case FrameStdout, FrameStderr:
			out := r.call.Stdout
			if typ == FrameStderr {
				out = r.call.Stderr
			}
			if _, err := out.Write(payload); err != nil {
				// Whoever reads exec is gone: the serve, seeing exec go
				// too, kills the call.
				return ExitSandbox
			}
		case FrameHeartbeat:
		case FrameAccept:
			a, ok := parseAccept(payload)
			if !ok || r.accept != nil {
				return r.fail("a malformed answer")
			}
			r.accept = &a
			if err := r.sendStdin(); errors.Is(err, os.ErrDeadlineExceeded) {
				return r.lost(err)
			}
		case FrameExit:
			code, ok := ExitCode(payload)
			if !ok {
				return r.fail("a malformed exit status")
			}
			return code
		default:
			return r.fail("an unknown frame")
		}
		var err error
		if typ, payload, err = r.next(); err != nil {
			return r.lost(err)
		}
	}
}

// next reads the serve's next frame, waiting no longer than its
// heartbeats allow or the call's deadline.
func (r *relay) next() (byte, []byte, error) {
	by := time.Now().Add(StallTimeout)
	if !r.deadline.IsZero() && r.deadline.Before(by) {
		by = r.deadline
	}
	r.conn.readUntil(by)
	typ, payload, buf, err := ReadFrame(r.conn, r.buf)
	r.buf = buf
	return typ, payload, err
}

// sendStdin passes exec's stdin on to the serve, to its end, before
// anything of the serve's is read: the serve runs nothing before it has
// all of it, and says nothing meanwhile but its heartbeats, which wait
// in the socket. A serve that hangs up meanwhile (it refused the call)
// has its Exit read after. The call's deadline, which the serve enters
// once it has all of stdin, counts from its end.
func (r *relay) sendStdin() error {
	if r.call.Request.StdinTerminal || r.call.Stdin == nil {
		return r.endStdin(nil)
	}
	// A serve that takes none of it for StallTimeout has stopped.
	_ = r.conn.setTimeout(syscall.SO_SNDTIMEO, StallTimeout)
	buf := make([]byte, MaxChunk)
	for {
		n, err := r.call.Stdin.Read(buf)
		if n > 0 {
			if werr := r.w.Frame(FrameStdin, buf[:n]); werr != nil {
				return werr
			}
		}
		switch {
		case err == io.EOF:
			return r.endStdin(nil)
		case err != nil:
			return r.endStdin([]byte(err.Error()))
		}
	}
}

// endStdin sends the end of exec's stdin, with the read's error if it
// failed.
func (r *relay) endStdin(readErr []byte) error {
	if err := r.w.Frame(FrameStdinEnd, readErr); err != nil {
		return err
	}
	if r.accept.AnswerBy > 0 {
		r.deadline = time.Now().Add(r.accept.AnswerBy)
	}
	return nil
}

// lost reports a serve that failed mid-call: past the call's deadline a
// timeout, otherwise a serve that stopped answering.
func (r *relay) lost(err error) int {
	cmd := ""
	if r.accept != nil {
		cmd = "command " + quote(r.accept.Command) + ": "
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && r.accept != nil && r.accept.Timeout > 0 &&
		!r.deadline.IsZero() && !time.Now().Before(r.deadline):
		r.say(cmd + "timed out after " + r.accept.Timeout.String() + " (the serve on " + r.call.Socket + " stopped answering)")
		return ExitTimeout
	case errors.Is(err, os.ErrDeadlineExceeded):
		r.say(cmd + "the serve on " + r.call.Socket + " stopped answering (no answer for " + time.Since(r.lastFrame).Round(time.Millisecond).String() +
			"): the call is abandoned; the serve kills it if it is ever continued")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		r.say(cmd + "the serve on " + r.call.Socket + " closed the connection mid-call (stopped?)")
	default:
		r.say(cmd + "the serve on " + r.call.Socket + ": " + err.Error())
	}
	return ExitSandbox
}

// fail reports a serve that sent what the relay does not know.
func (r *relay) fail(what string) int {
	r.say("the serve on " + r.call.Socket + " sent " + what + " (a serve of another version?)")
	return ExitSandbox
}

func (r *relay) say(msg string) {
	_, _ = io.WriteString(r.call.Stderr, r.call.Prog+": "+msg+"\n")
}

// quote is s in double quotes, its quotes, backslashes and control bytes
// escaped: strconv.Quote for a command name, which this package may not
// import.
func quote(s string) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c == 0x7f:
			b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}
