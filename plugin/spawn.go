package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing/grpctrace"
)

// firstStdinAlloc bounds what Spawn allocates before any stdin has
// arrived, whatever stdin_size the host announced. Up to it the buffer
// is the announced size at once: growing by doubling held the old and
// the new buffer together, and a 50 MB stdin cost the plugin 139 MB of
// RSS. A host that announces more than it sends costs address space,
// not memory: the pages of a fresh allocation are not touched until
// written.
const firstStdinAlloc = 64 << 20

// Spawn reads the request and all of stdin, runs the backend under the
// stream's context (a host cancel cancels the backend, which kills what
// it started), then streams the output back and the result last.
func (s *server) Spawn(stream sandboxpb.Sandbox_SpawnServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	start, sb, err := s.readStart(stream)
	if err != nil {
		return err
	}
	ctx, cancelCall := enterCall(ctx, start)
	defer cancelCall()
	stdin, err := readStdin(stream, start)
	if err != nil {
		return err
	}
	req, err := requestOf(start, stdin)
	if err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	out := newStreamWriter(stream)
	// A Cancel from the host ends the call as a cancelled context would,
	// and sends what the hook wrote at once, as a timeout does.
	if id := start.GetCall(); id != "" {
		unregister := s.inFlight(id, func() { out.flush(); cancel() })
		defer unregister()
	}
	// The call's trace context came in the stream's metadata.
	return s.run(grpctrace.Extract(ctx), sb, req, out)
}

// requestOf is the backend's request a start message and its stdin make.
func requestOf(start *sandboxpb.SpawnStart, stdin []byte) (sandbox.Request, error) {
	for _, kv := range start.GetEnv() {
		if !strings.Contains(kv, "=") {
			return sandbox.Request{}, status.Errorf(codes.InvalidArgument, "env entry %q has no value: the host resolves bare keys before sending", kv)
		}
	}
	return sandbox.Request{
		Command: start.GetCommand(),
		Args:    start.GetArgs(),
		Env:     start.GetEnv(),
		Stdin:   stdin,
		Timeout: time.Duration(max(start.GetTimeoutNanos(), 0)),
	}, nil
}

// enterCall sets the call's deadline on the plugin's side: what remained
// of its timeout when the host sent start, from now (all of it, from a
// host that does not say). ctx then ends sandbox.Grace past it, as the
// host's does: a backend that ignores its own deadline is stopped there.
func enterCall(ctx context.Context, start *sandboxpb.SpawnStart) (context.Context, context.CancelFunc) {
	timeout := time.Duration(start.GetTimeoutNanos())
	if timeout <= 0 {
		// The backend's default applies, which it alone knows.
		return context.WithCancel(ctx)
	}
	left := time.Duration(start.GetRemainingNanos())
	if left <= 0 || left > timeout {
		left = timeout
	}
	return sandbox.EnterAt(ctx, time.Now().Add(left), timeout)
}

// run calls the backend for a call the caller has entered (s.enter),
// sending its output through out as it comes and its result last. ctx
// carries the host's trace context and ends when the host gives up.
func (s *server) run(ctx context.Context, sb sandbox.Sandbox, req sandbox.Request, out *streamWriter) error {
	// The call's span, a child of the host's; the backend's spans are
	// children of this.
	ctx, span := s.tracer.Start(ctx, "plugin.spawn",
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(append(tracing.CommandAttrs(req.Command),
			attribute.String("promptkit.plugin.name", s.name),
			attribute.String("promptkit.sandbox.name", sb.Name()))...))
	if req.Timeout > 0 {
		// The host waits only sandbox.Grace past the timeout for the result:
		// what the hook wrote goes out when the timeout fires, and what
		// it wrote last as it comes, not only once the backend has
		// finished killing the call.
		flush := time.AfterFunc(sandbox.Remaining(ctx, req.Timeout), out.flush)
		defer flush.Stop()
	}
	resp, err := s.spawn(ctx, sb, req, out)
	s.leave()
	if err == nil {
		err = resp.Err
	}
	tracing.End(span, err)
	s.log.Trace("spawned", "sandbox", sb.Name(), "command", req.Command, "error", err)
	result := resultOf(resp, err)
	// Under mu: the flush timer may be sending at this very moment.
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.err != nil {
		return out.err
	}
	result.Stdout, result.Stderr = out.out.buf, out.errs.buf
	out.err = errResultSent // a flush that fires late sends nothing
	if out.soon != nil {
		out.soon.Stop()
	}
	return out.stream.Send(&sandboxpb.SpawnOutput{Msg: &sandboxpb.SpawnOutput_Result{Result: result}})
}

// errResultSent ends a streamWriter once the result has gone out.
var errResultSent = errors.New("the result is sent")

// spawn calls the backend, handing its output to out: as it is produced
// when the backend is a sandbox.Streamer, all at once after it returns
// otherwise. A panic in the backend becomes that call's error instead of
// the end of every call the process serves.
func (s *server) spawn(ctx context.Context, sb sandbox.Sandbox, req sandbox.Request, out *streamWriter) (resp sandbox.Response, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("backend Spawn panicked", "sandbox", sb.Name(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = sandbox.Errorf(sandbox.KindUnknown, "sandbox %s: backend panicked: %v", sb.Name(), r)
			resp = sandbox.Response{Err: err}
		}
	}()
	// Send errors are kept in out.err and end the stream.
	return sandbox.SpawnTo(ctx, sb, req, out.stdout(), out.stderr())
}

// streamWriter sends a backend's output as it is written. Each stream is
// gathered into chunks of flushAt bytes first, so a hook's few bytes of
// output are not sent on their own but with the result, unless the call
// is still running StreamDelay after the first byte that waits: then
// what waits goes out, so a long hook's progress shows while it runs.
// stdout and stderr come from two goroutines, the timers fire on their
// own, and a gRPC stream takes one sender at a time: mu guards the
// pending output and the stream. The first send error is kept and later
// writes are dropped (the stream is gone; the backend keeps draining its
// process).
type streamWriter struct {
	stream chunkSender
	mu     sync.Mutex
	err    error
	out    pending
	errs   pending
	eager  bool        // since flush: every write goes out at once
	soon   *time.Timer // sends what waits StreamDelay after it began to
	armed  bool        // soon is set to fire
}

// StreamDelay is how long output a running call has written may wait to
// be sent with more: long enough to gather a burst of writes into one
// message, short enough that a watcher sees progress as it happens.
const StreamDelay = 25 * time.Millisecond

// flushAt is how much output is gathered before it is sent: large enough
// that per-message costs vanish, small enough to overlap with the process.
const flushAt = 256 << 10

// pending is one stream's output not yet sent.
type pending struct {
	buf  []byte
	wrap func([]byte) *sandboxpb.SpawnOutput
}

func newStreamWriter(stream chunkSender) *streamWriter {
	return &streamWriter{stream: stream, out: pending{wrap: stdoutMsg}, errs: pending{wrap: stderrMsg}}
}

func (w *streamWriter) stdout() io.Writer { return streamSink{w, &w.out} }
func (w *streamWriter) stderr() io.Writer { return streamSink{w, &w.errs} }

type streamSink struct {
	w *streamWriter
	p *pending
}

// Write gathers p and sends every full chunk (every byte, once eager);
// gRPC has serialized a message before Send returns, so nothing of p is
// held on to.
func (s streamSink) Write(p []byte) (int, error) {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	s.p.buf = append(s.p.buf, p...)
	if err := s.w.drainLocked(s.p, s.w.eager); err != nil {
		return 0, err
	}
	if len(s.p.buf) > 0 && !s.w.armed && s.w.err == nil {
		s.w.armed = true
		if s.w.soon == nil {
			s.w.soon = time.AfterFunc(StreamDelay, s.w.sendWaiting)
		} else {
			s.w.soon.Reset(StreamDelay)
		}
	}
	return len(p), nil
}

// sendWaiting sends what both streams have gathered.
func (w *streamWriter) sendWaiting() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	w.drainAllLocked()
}

// flush sends what both streams have gathered, and from then on sends
// every write as it comes: the call's time is up, and the host waits for
// its last output only a moment.
func (w *streamWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.eager = true
	w.drainAllLocked()
}

// drainAllLocked sends all that both streams hold, stdout first.
func (w *streamWriter) drainAllLocked() {
	for _, p := range []*pending{&w.out, &w.errs} {
		if w.drainLocked(p, true) != nil {
			return
		}
	}
}

// drainLocked sends p's output in chunks of at most flushAt: the full
// chunks only, or all of it.
func (w *streamWriter) drainLocked(p *pending, all bool) error {
	for len(p.buf) >= flushAt || all && len(p.buf) > 0 {
		n := min(len(p.buf), flushAt)
		if err := w.sendLocked(p.wrap(p.buf[:n])); err != nil {
			p.buf = nil
			return err
		}
		p.buf = append(p.buf[:0], p.buf[n:]...)
	}
	return nil
}

func (w *streamWriter) sendLocked(msg *sandboxpb.SpawnOutput) error {
	if w.err != nil {
		return w.err
	}
	w.err = w.stream.Send(msg)
	return w.err
}

func (s *server) readStart(stream sandboxpb.Sandbox_SpawnServer) (*sandboxpb.SpawnStart, sandbox.Sandbox, error) {
	msg, err := stream.Recv()
	if err != nil {
		return nil, nil, recvError(err)
	}
	start := msg.GetStart()
	if start == nil {
		return nil, nil, status.Errorf(codes.InvalidArgument, "first spawn message must be start, got %s", inputKind(msg))
	}
	if start.GetStdinSize() < 0 {
		return nil, nil, status.Errorf(codes.InvalidArgument, "negative stdin_size %d", start.GetStdinSize())
	}
	sb, err := s.lookup(start.GetHandle())
	if err != nil {
		return nil, nil, err
	}
	return start, sb, nil
}

// readStdin collects stdin up to stdin_end, holding the host to the size
// it announced. The buffer doubles as data arrives, never past the
// announced size: memory follows what was sent, not what was claimed, and
// the last growth lands on the exact size.
func readStdin(stream sandboxpb.Sandbox_SpawnServer, start *sandboxpb.SpawnStart) ([]byte, error) {
	size := start.GetStdinSize()
	if start.GetStdinComplete() {
		if int64(len(start.GetStdin())) != size {
			return nil, status.Errorf(codes.InvalidArgument, "start carries %d bytes of stdin, %d announced", len(start.GetStdin()), size)
		}
		return start.GetStdin(), nil
	}
	if len(start.GetStdin()) > 0 {
		return nil, status.Error(codes.InvalidArgument, "start carries stdin without stdin_complete")
	}
	var stdin []byte
	if size > 0 {
		stdin = make([]byte, 0, min(size, firstStdinAlloc))
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, status.Error(codes.InvalidArgument, "spawn input ended before stdin_end")
		}
		if err != nil {
			return nil, recvError(err)
		}
		switch m := msg.GetMsg().(type) {
		case *sandboxpb.SpawnInput_Stdin:
			need := int64(len(stdin)) + int64(len(m.Stdin))
			if need > size {
				return nil, status.Errorf(codes.InvalidArgument, "more stdin than the %d bytes announced", size)
			}
			if need > int64(cap(stdin)) {
				grown := make([]byte, len(stdin), min(size, max(2*int64(cap(stdin)), need)))
				copy(grown, stdin)
				stdin = grown
			}
			stdin = append(stdin, m.Stdin...)
		case *sandboxpb.SpawnInput_StdinEnd:
			if int64(len(stdin)) != size {
				return nil, status.Errorf(codes.InvalidArgument, "stdin_end after %d bytes of stdin, %d announced", len(stdin), size)
			}
			return stdin, nil
		default:
			return nil, status.Errorf(codes.InvalidArgument, "unexpected %s while reading stdin", inputKind(msg))
		}
	}
}

func inputKind(msg *sandboxpb.SpawnInput) string {
	switch msg.GetMsg().(type) {
	case *sandboxpb.SpawnInput_Start:
		return "start"
	case *sandboxpb.SpawnInput_Stdin:
		return "stdin"
	case *sandboxpb.SpawnInput_StdinEnd:
		return "stdin_end"
	}
	return "empty message"
}

// recvError passes on what ended the stream: the host's cancel or a
// broken connection already carry a status.
func recvError(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Errorf(codes.Unavailable, "spawn input: %v", err)
}

func stdoutMsg(b []byte) *sandboxpb.SpawnOutput {
	return &sandboxpb.SpawnOutput{Msg: &sandboxpb.SpawnOutput_Stdout{Stdout: b}}
}

func stderrMsg(b []byte) *sandboxpb.SpawnOutput {
	return &sandboxpb.SpawnOutput{Msg: &sandboxpb.SpawnOutput_Stderr{Stderr: b}}
}

type chunkSender interface {
	Send(*sandboxpb.SpawnOutput) error
}
