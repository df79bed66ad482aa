package main

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// relayServer runs the exec calls that reach a serve over the relay
// (internal/execrelay) in the sandboxes the serve lends, as exec would
// run them itself: its flags, messages and exit statuses, written to
// exec's stdout and stderr.
type relayServer struct {
	cfg       string // the serve's config, canonical
	socket    string
	sandboxes map[string]sandbox.Sandbox
	names     []string // of sandboxes, in order
	tracer    trace.Tracer
	log       hclog.Logger

	ctx  context.Context // ends when the serve stops
	stop context.CancelFunc

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	stopped bool
	calls   sync.WaitGroup
}

func newRelayServer(cfg, socket string, sandboxes map[string]sandbox.Sandbox, names []string, tp trace.TracerProvider, log hclog.Logger) *relayServer {
	ctx, stop := context.WithCancel(context.Background())
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return &relayServer{
		cfg: cfg, socket: socket, sandboxes: sandboxes, names: names,
		tracer: tp.Tracer("github.com/altairalabs/promptkit-sandbox/cmd/promptkit-sandbox"),
		log:    log, ctx: ctx, stop: stop, conns: make(map[net.Conn]struct{}),
	}
}

// Errors a call ends with when exec is gone or interrupted.
var (
	errExecGone        = errors.New("exec went away")
	errExecInterrupted = errors.New("exec was interrupted")
)

// serveConn runs the call of one relay connection, its Magic read.
func (s *relayServer) serveConn(c net.Conn) {
	if !s.track(c) {
		_ = c.Close()
		return
	}
	defer s.untrack(c)
	_ = c.SetReadDeadline(time.Now().Add(execrelay.StallTimeout))
	typ, payload, _, err := execrelay.ReadFrame(c, nil)
	if err == nil && typ != execrelay.FrameRequest {
		err = errors.New("the first frame is not a request")
	}
	var req execrelay.Request
	if err == nil {
		req, err = execrelay.ParseRequest(payload)
	}
	if err != nil {
		s.log.Debug("relay: dropped a connection", "error", err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})

	ctx, cancel := context.WithCancelCause(s.ctx)
	defer cancel(nil)
	out := execrelay.NewWriter(stallWriter{c, cancel})
	stdin, feed := io.Pipe()
	// Once the call has its stdin, the rest of it is dropped; a read
	// that stopped early (stdin over the limit) must not hold up the
	// frames after it.
	defer func() { _ = stdin.Close() }()
	go readRelay(c, feed, cancel)
	code := s.exec(ctx, req, out, stdin)
	_ = out.Exit(code)
}

// exec is serveConn's call: exec's flags parsed and checked as exec
// checks them, then run in the sandbox they name.
func (s *relayServer) exec(ctx context.Context, req execrelay.Request, out *execrelay.Writer, stdin io.Reader) int {
	e := &cliEnv{
		stdin:     stdin,
		stdout:    out.Stream(execrelay.FrameStdout),
		stderr:    out.Stream(execrelay.FrameStderr),
		dir:       req.Dir,
		lookupEnv: req.Lookup,
	}
	fs, f, _ := newExecFlags(e)
	if ok, code := f.parse(e, fs, req.Args); !ok {
		return code
	}
	cfg, code := e.execConfig(f)
	if code != exitOK {
		return code
	}
	if cfg != s.cfg {
		e.errorf("exec: the serve on %s serves %s, not %s: start a serve of this config on its own --socket", s.socket, s.cfg, cfg)
		return exitSandbox
	}
	sb, ok := s.sandboxes[*f.name]
	if !ok {
		e.errorf("exec: no sandbox named %q in %s (it declares %s)", *f.name, cfg, strings.Join(s.names, ", "))
		return exitUsage
	}
	accept := execrelay.Accept{Command: f.argv[0], Timeout: *f.timeout}
	if *f.timeout > 0 {
		accept.AnswerBy = *f.timeout + sandbox.Grace
	}
	if err := out.Frame(execrelay.FrameAccept, accept.Marshal()); err != nil {
		return exitSandbox
	}
	defer heartbeat(out)()

	ctx, span := s.tracer.Start(tracing.ExtractEnv(ctx, e.getenv), "serve.exec",
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(append(tracing.CommandAttrs(f.argv[0]),
			attribute.String("promptkit.sandbox.name", *f.name))...))
	err := e.spawnCall(ctx, f, sb)
	tracing.End(span, err)
	return e.spawnExitCode(f.cmd, err)
}

// heartbeat tells exec the serve is there every HeartbeatInterval, until
// the returned stop.
func heartbeat(out *execrelay.Writer) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(execrelay.HeartbeatInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if out.Frame(execrelay.FrameHeartbeat, nil) != nil {
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// readRelay reads exec's frames after its request: its stdin into feed,
// and a Cancel, or the connection's end, as the end of the call.
func readRelay(c net.Conn, feed *io.PipeWriter, cancel context.CancelCauseFunc) {
	var buf []byte
	for {
		typ, payload, grown, err := execrelay.ReadFrame(c, buf)
		buf = grown
		if err != nil {
			_ = feed.CloseWithError(errExecGone)
			cancel(errExecGone)
			return
		}
		switch typ {
		case execrelay.FrameStdin:
			// Past the end of what the call reads, the write fails and
			// the bytes are dropped.
			_, _ = feed.Write(payload)
		case execrelay.FrameStdinEnd:
			if len(payload) > 0 {
				_ = feed.CloseWithError(errors.New(string(payload)))
			} else {
				_ = feed.Close()
			}
		case execrelay.FrameCancel:
			cancel(errExecInterrupted)
			_ = feed.CloseWithError(errExecInterrupted)
		}
	}
}

// stallWriter writes to exec, giving each write StallTimeout: an exec
// that takes nothing for that long is taken for stopped, and its call
// is ended.
type stallWriter struct {
	c      net.Conn
	cancel context.CancelCauseFunc
}

func (w stallWriter) Write(p []byte) (int, error) {
	_ = w.c.SetWriteDeadline(time.Now().Add(execrelay.StallTimeout))
	n, err := w.c.Write(p)
	if err != nil {
		w.cancel(errExecGone)
	}
	return n, err
}

func (s *relayServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.conns[c] = struct{}{}
	s.calls.Add(1)
	return true
}

func (s *relayServer) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
	s.calls.Done()
}

// end ends the calls in flight, as a serve's Stop ends its gRPC ones:
// their connections closed (exec reports the serve gone, 125), the
// sandboxes killing what they started.
func (s *relayServer) end() {
	s.mu.Lock()
	s.stopped = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.stop()
}

// wait waits within grace for the calls end ended to return.
func (s *relayServer) wait(grace time.Duration) {
	done := make(chan struct{})
	go func() { s.calls.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		s.log.Warn("calls still running after the shutdown grace", "grace", grace)
	}
}
