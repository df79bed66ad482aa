package plugin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// RemoteSandbox is a sandbox opened in a plugin process. It behaves as
// the backend would in-process: the same typed errors and messages, the
// same output caps, and a cancelled context ends the call at once (the
// plugin then kills what it started).
//
// Errors of its own: a broken connection or a plugin that exits mid-call
// is a KindTransport error naming the plugin ("plugin docker: connection
// lost: ..."), returned as soon as the loss is seen; a handle the plugin
// does not know (the sandbox was closed, or the process is not the one it
// was opened in) is KindStart, since nothing was started.
type RemoteSandbox struct {
	client *Client
	plugin string
	name   string
	mode   string
	handle string
	limit  int
	env    []string

	closeOnce sync.Once
	closeErr  error
}

var (
	_ sandbox.Sandbox      = (*RemoteSandbox)(nil)
	_ sandbox.Streamer     = (*RemoteSandbox)(nil)
	_ sandbox.Closer       = (*RemoteSandbox)(nil)
	_ sandbox.EnvForwarder = (*RemoteSandbox)(nil)
	_ OutputLimiter        = (*RemoteSandbox)(nil)
)

// Name returns the name the sandbox was opened under.
func (r *RemoteSandbox) Name() string { return r.name }

// Mode returns the mode the sandbox was opened with.
func (r *RemoteSandbox) Mode() string { return r.mode }

// OutputLimit is the per-stream cap the plugin reported; the host keeps
// no more than this of stdout or of stderr, whatever the plugin sends.
func (r *RemoteSandbox) OutputLimit() int { return r.limit }

// ForwardedEnv is what the plugin reported its sandbox sets in every
// process, as "KEY=value" entries (see sandbox.EnvForwarder).
func (r *RemoteSandbox) ForwardedEnv() []string { return slices.Clone(r.env) }

// Spawn runs req in the plugin. Bare "KEY" entries of req.Env are
// resolved here, against the host's environment, and dropped when unset,
// so the plugin receives only "KEY=value" entries.
func (r *RemoteSandbox) Spawn(ctx context.Context, req sandbox.Request) (resp sandbox.Response, err error) {
	stdout := cappedBuffer{limit: r.limit}
	stderr := cappedBuffer{limit: r.limit}
	resp, err = r.call(ctx, req, &stdout, &stderr)
	resp.Stdout, resp.StdoutTruncated = stdout.bytes(), resp.StdoutTruncated || stdout.truncated
	resp.Stderr, resp.StderrTruncated = stderr.bytes(), resp.StderrTruncated || stderr.truncated
	resp.Err = err
	return resp, err
}

// SpawnStreaming is Spawn with the output written to stdout and stderr
// as the plugin sends it (see sandbox.Streamer), up to the same cap.
func (r *RemoteSandbox) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (resp sandbox.Response, err error) {
	out := cappedWriter{w: stdout, limit: r.limit}
	errs := cappedWriter{w: stderr, limit: r.limit}
	resp, err = r.call(ctx, req, &out, &errs)
	resp.StdoutTruncated = resp.StdoutTruncated || out.truncated
	resp.StderrTruncated = resp.StderrTruncated || errs.truncated
	resp.Err = err
	return resp, err
}

// call runs req in the plugin, handing the output to stdout and stderr
// as it arrives; the response carries the truncation the plugin
// reported. A call whose stdin fits one message goes on the
// connection's Calls stream when the plugin serves it, any other on a
// Spawn stream of its own.
func (r *RemoteSandbox) call(ctx context.Context, req sandbox.Request, stdout, stderr outputSink) (resp sandbox.Response, err error) {
	what := fmt.Sprintf("command %q", req.Command)
	if ctx.Err() != nil {
		return resp, sandbox.ContextError(ctx, what, 0)
	}
	if err := r.client.exited(); err != nil {
		return resp, err
	}
	h := hop{r: r, ctx: ctx, what: what, timeout: req.Timeout}
	if req.Timeout > 0 {
		// What is left of the deadline the call entered with
		// (sandbox.Enter), or all of the timeout for a caller that set none.
		left := sandbox.Remaining(ctx, req.Timeout)
		if left <= 0 {
			// Reopening the sandbox took all of it: nothing runs.
			return resp, sandbox.NewError(sandbox.KindTimeout, fmt.Sprintf("%s: timed out after %s before it reached plugin %s",
				what, req.Timeout, r.plugin), nil)
		}
		h.deadline = time.Now().Add(left)
	}
	if len(req.Stdin) <= ChunkSize && r.client.servesCalls() {
		return h.onCalls(req, stdout, stderr)
	}
	return h.onStream(req, stdout, stderr)
}

// hop is one call on its way to the plugin and back.
type hop struct {
	r        *RemoteSandbox
	ctx      context.Context // the caller's
	what     string
	timeout  time.Duration
	deadline time.Time // the call's own; zero without a timeout
}

// onStream runs the call on a Spawn stream of its own.
//
// The stream ends when the plugin process is known to be gone, the
// plugin has not answered sandbox.Grace past the call's timeout, or sandbox.Grace
// after the caller gave up, whichever comes first: the host holds the
// timeout whatever the plugin does. When the caller gives up, the plugin
// is told (a cancel message), so that it ends the call and sends what
// the process wrote.
func (h hop) onStream(req sandbox.Request, stdout, stderr outputSink) (resp sandbox.Response, err error) {
	r := h.r
	sctx, cancel := context.WithCancel(context.WithoutCancel(h.ctx))
	defer cancel()
	stop := context.AfterFunc(r.client.done, cancel)
	defer stop()
	hs := newHopStream(r.client.rpc, h.start(req))
	stopCancel := context.AfterFunc(h.ctx, func() { hs.cancel(cancel) })
	defer stopCancel()
	defer hs.stop()
	if !h.deadline.IsZero() {
		var cancelHop context.CancelFunc
		sctx, cancelHop = context.WithDeadline(sctx, h.deadline.Add(sandbox.Grace))
		defer cancelHop()
	}
	fail := func(err error) error { return h.failure(sandbox.Done(sctx), err) }

	stream, err := r.client.rpc.Spawn(sctx, grpc.MaxCallRecvMsgSize(maxMessage))
	if err != nil {
		return resp, fail(err)
	}
	if err := hs.sendRequest(stream, req.Stdin); err != nil {
		if !errors.Is(err, io.EOF) {
			return resp, fail(err)
		}
		// io.EOF: the plugin ended the stream; its status is read below.
	}

	for {
		msg, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errNoResult
			}
			return resp, fail(err)
		}
		switch m := msg.GetMsg().(type) {
		case *sandboxpb.SpawnOutput_Stdout:
			stdout.write(m.Stdout)
		case *sandboxpb.SpawnOutput_Stderr:
			stderr.write(m.Stderr)
		case *sandboxpb.SpawnOutput_Result:
			return h.result(m.Result, stdout, stderr)
		default:
			return resp, connectionError(r.plugin, "spawn: protocol error", errors.New("empty output message"))
		}
	}
}

// onCalls runs the call on the connection's Calls stream, under the same
// rules as onStream: the host holds the timeout whatever the plugin
// does, and a caller that gives up has the plugin told, its result
// awaited sandbox.Grace. What ends a Spawn stream here ends the call alone.
func (h hop) onCalls(req sandbox.Request, stdout, stderr outputSink) (resp sandbox.Response, err error) {
	r := h.r
	cs, c, err := r.client.calls().add(r.limit)
	if err != nil {
		return resp, h.failure(false, err)
	}
	hopOver := atomic.Bool{}
	// giveUp ends the call without its result: the plugin is told, and a
	// start still being sent (a plugin that reads nothing) can only be
	// stopped by ending the stream.
	giveUp := func(err error) {
		cs.drop(c)
		if c.sending.Load() {
			cs.fail(err)
		} else {
			cs.cancelCall(c)
		}
		c.finish(err)
	}
	stop := context.AfterFunc(r.client.done, func() { giveUp(r.client.exited()) })
	defer stop()
	if !h.deadline.IsZero() {
		t := time.AfterFunc(time.Until(h.deadline.Add(sandbox.Grace)), func() {
			hopOver.Store(true)
			giveUp(context.DeadlineExceeded)
		})
		defer t.Stop()
	}
	var cut lateCut
	stopCancel := context.AfterFunc(h.ctx, func() {
		if c.sending.Load() {
			giveUp(context.Cause(h.ctx))
			return
		}
		cs.cancelCall(c)
		cut.arm(func() { giveUp(context.Cause(h.ctx)) })
	})
	defer cut.disarm()
	defer stopCancel()

	c.sending.Store(true)
	err = cs.sendIn(&sandboxpb.CallInput{Id: c.id, Msg: &sandboxpb.CallInput_Start{Start: h.start(req)}})
	c.sending.Store(false)
	if err != nil {
		cs.fail(err)
		return resp, h.failure(hopOver.Load(), err)
	}
	for {
		msgs, err := c.take()
		if err != nil {
			return resp, h.failure(hopOver.Load(), err)
		}
		for _, msg := range msgs {
			switch m := msg.GetMsg().(type) {
			case *sandboxpb.CallOutput_Stdout:
				stdout.write(m.Stdout)
			case *sandboxpb.CallOutput_Stderr:
				stderr.write(m.Stderr)
			case *sandboxpb.CallOutput_Result:
				return h.result(m.Result, stdout, stderr)
			case *sandboxpb.CallOutput_Refused:
				return resp, h.failure(false, status.Error(codes.Code(m.Refused.GetCode()), m.Refused.GetMessage()))
			default:
				return resp, connectionError(r.plugin, "calls: protocol error", errors.New("empty output message"))
			}
		}
	}
}

// start is the message that begins the call: the request, with bare env
// keys resolved here; what remains of its timeout; all of stdin when it
// fits in one message; and the caller's trace context (a Spawn stream's
// metadata carries it too, but one Calls stream's cannot carry each
// call's).
func (h hop) start(req sandbox.Request) *sandboxpb.SpawnStart {
	start := &sandboxpb.SpawnStart{
		Handle:       h.r.handle,
		Command:      req.Command,
		Args:         req.Args,
		Env:          shell.MergeEnv(nil, req.Env, os.LookupEnv),
		TimeoutNanos: int64(max(req.Timeout, 0)),
		StdinSize:    int64(len(req.Stdin)),
		TraceContext: tracing.ContextMap(h.ctx),
	}
	if !h.deadline.IsZero() {
		start.RemainingNanos = int64(max(time.Until(h.deadline), 1))
	}
	if len(req.Stdin) <= ChunkSize {
		start.Stdin, start.StdinComplete = req.Stdin, true
	}
	return start
}

// result is the call's answer from the plugin's result message.
func (h hop) result(res *sandboxpb.SpawnResult, stdout, stderr outputSink) (resp sandbox.Response, err error) {
	stdout.write(res.GetStdout())
	stderr.write(res.GetStderr())
	resp.StdoutTruncated = res.GetStdoutTruncated()
	resp.StderrTruncated = res.GetStderrTruncated()
	err = errorOf(res)
	if sandbox.Done(h.ctx) {
		// The plugin ended the call on the caller's cancel (or
		// deadline): the caller's own reason is the error, the output
		// is what the process wrote.
		return resp, sandbox.ContextError(h.ctx, h.what, 0)
	}
	if !h.deadline.IsZero() && time.Now().After(h.deadline) && (err == nil || sandbox.KindOf(err) == sandbox.KindExit) {
		// The plugin let the call run past its timeout: what it says
		// came too late to count.
		return resp, sandbox.NewError(sandbox.KindTimeout, fmt.Sprintf("%s: timed out after %s (plugin %s answered after it)",
			h.what, h.timeout, h.r.plugin), nil)
	}
	return resp, err
}

// failure classifies what ended a call without its result. hopOver says
// the host stopped waiting for the plugin's answer sandbox.Grace past the
// call's deadline.
func (h hop) failure(hopOver bool, err error) error {
	// Past the call's own timeout, with the plugin still there, the call
	// timed out whichever context noticed first (a host bounds the whole
	// call, a reopen included, by the same deadline).
	if !h.deadline.IsZero() && !time.Now().Before(h.deadline) && hopOver && h.r.client.exited() == nil {
		return sandbox.NewError(sandbox.KindTimeout, fmt.Sprintf("%s: timed out after %s (plugin %s did not answer within %s of it)",
			h.what, h.timeout, h.r.plugin, sandbox.Grace), nil)
	}
	return h.r.streamError(h.ctx, h.what, h.timeout, err)
}

// hopStream is the host's side of one Spawn stream: the request, then,
// if the caller gives up, a Cancel for the call it names. Before the
// request is all sent nothing has run, and the stream is simply ended.
type hopStream struct {
	rpc   sandboxpb.SandboxClient
	start *sandboxpb.SpawnStart // its Call names the call for Cancel
	sent  atomic.Bool
	cut   lateCut // ends the stream sandbox.Grace after a cancel
}

// newHopStream names the call start begins: 128 random bits, unique
// among the host's.
func newHopStream(rpc sandboxpb.SandboxClient, start *sandboxpb.SpawnStart) *hopStream {
	start.Call = rand.Text()
	return &hopStream{rpc: rpc, start: start}
}

// sendRequest writes the start message, then stdin in chunks and the end
// marker — or, when stdin fits in one message, the start message alone
// carrying all of it.
func (h *hopStream) sendRequest(stream sandboxpb.Sandbox_SpawnClient, stdin []byte) error {
	start := h.start
	if err := stream.Send(&sandboxpb.SpawnInput{Msg: &sandboxpb.SpawnInput_Start{Start: start}}); err != nil {
		return err
	}
	if !start.StdinComplete {
		for data := stdin; len(data) > 0; {
			n := min(len(data), ChunkSize)
			if err := stream.Send(&sandboxpb.SpawnInput{Msg: &sandboxpb.SpawnInput_Stdin{Stdin: data[:n]}}); err != nil {
				return err
			}
			data = data[n:]
		}
		if err := stream.Send(&sandboxpb.SpawnInput{Msg: &sandboxpb.SpawnInput_StdinEnd{StdinEnd: &sandboxpb.StdinEnd{}}}); err != nil {
			return err
		}
	}
	h.sent.Store(true)
	return stream.CloseSend()
}

// cancel tells the plugin the caller gave up, and ends the stream (end)
// sandbox.Grace later if the result has not come by then, or at once where
// the plugin cannot take the Cancel (one built before it, one gone). A
// call the plugin no longer has is ending: its result is on the way.
func (h *hopStream) cancel(end context.CancelFunc) {
	if !h.sent.Load() {
		end()
		return
	}
	h.cut.arm(end)
	ctx, cancel := context.WithTimeout(context.Background(), sandbox.Grace)
	defer cancel()
	if _, err := h.rpc.Cancel(ctx, &sandboxpb.CancelRequest{Call: h.start.Call}); err != nil {
		end()
	}
}

// stop disarms the cut once the call is over.
func (h *hopStream) stop() { h.cut.disarm() }

// lateCut ends a call whose caller gave up sandbox.Grace later, when the
// plugin has not brought its result by then: time for the plugin to
// kill the process and send what it wrote, and no more. Arming it after
// the call is over (a cancel that raced the result) does nothing.
type lateCut struct {
	mu    sync.Mutex
	t     *time.Timer
	ended bool
}

func (c *lateCut) arm(end func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended && c.t == nil {
		c.t = time.AfterFunc(sandbox.Grace, end)
	}
}

// disarm marks the call over and stops a cut already armed.
func (c *lateCut) disarm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	if c.t != nil {
		c.t.Stop()
	}
}

// deadlineSkew is how far apart the host's and the plugin's clocks may
// see the same deadline pass.
const deadlineSkew = 100 * time.Millisecond

// streamError classifies what ended a Spawn stream early.
func (r *RemoteSandbox) streamError(ctx context.Context, what string, timeout time.Duration, err error) error {
	if sandbox.Done(ctx) {
		return sandbox.ContextError(ctx, what, timeout)
	}
	if err := r.client.exited(); err != nil {
		return err
	}
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.Canceled, codes.DeadlineExceeded:
		// gRPC sends the call's deadline to the plugin, whose side of
		// the stream can give up a moment before ours does: the
		// deadline it ended on is the caller's.
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < deadlineSkew {
			select {
			case <-ctx.Done():
				return sandbox.ContextError(ctx, what, timeout)
			case <-time.After(time.Until(deadline) + deadlineSkew):
			}
		}
	case codes.NotFound:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("plugin %s: sandbox %s: %s", r.plugin, r.name, st.Message()), nil)
	case codes.InvalidArgument, codes.ResourceExhausted, codes.Unimplemented, codes.FailedPrecondition:
		// The plugin refused the request itself: a protocol mismatch,
		// not a lost connection.
		return transportError(r.plugin, "spawn refused", errors.New(st.Message()))
	}
	return connectionError(r.plugin, "connection lost", statusCause(err))
}

// Close releases the sandbox in the plugin; a second Close does nothing.
func (r *RemoteSandbox) Close() error {
	r.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		_, err := r.client.rpc.Close(ctx, &sandboxpb.CloseRequest{Handle: r.handle})
		if err == nil {
			return
		}
		if status.Code(err) == codes.Unknown {
			// The backend's own Close failed; its words, verbatim.
			r.closeErr = fmt.Errorf("close sandbox %s: %s", r.name, status.Convert(err).Message())
			return
		}
		r.closeErr = r.client.callError(ctx, "close sandbox "+r.name, err)
	})
	return r.closeErr
}

// outputSink takes one stream of a call's output as it arrives.
type outputSink interface{ write(p []byte) }

// cappedWriter passes at most limit bytes on to w and records that more
// came. A failing w (the caller's stdout closed) does not end the call:
// the plugin's output is still drained, as a process's is.
type cappedWriter struct {
	w         io.Writer
	limit     int
	n         int
	truncated bool
}

func (c *cappedWriter) write(p []byte) {
	if room := c.limit - c.n; len(p) > room {
		p = p[:room]
		c.truncated = true
	}
	if len(p) == 0 {
		return
	}
	c.n += len(p)
	_, _ = c.w.Write(p)
}

// cappedBuffer keeps at most limit bytes and records that more came.
// It holds the received chunks (each already a copy of its own) and joins
// them once at the end, so a stream costs one copy, and a stream of one
// chunk, a typical hook's answer, none. What it holds never exceeds
// limit, however much a plugin sends.
type cappedBuffer struct {
	limit     int
	n         int
	chunks    [][]byte
	truncated bool
}

func (b *cappedBuffer) write(p []byte) {
	if room := b.limit - b.n; len(p) > room {
		p = p[:room:room]
		b.truncated = true
	}
	if len(p) == 0 {
		return
	}
	b.chunks = append(b.chunks, p)
	b.n += len(p)
}

// bytes returns everything kept, nil when nothing was.
func (b *cappedBuffer) bytes() []byte {
	switch len(b.chunks) {
	case 0:
		return nil
	case 1:
		return b.chunks[0]
	}
	out := make([]byte, 0, b.n)
	for _, c := range b.chunks {
		out = append(out, c...)
	}
	b.chunks = nil
	return out
}
