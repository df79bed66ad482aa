package resident

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// ErrEnded is what calls fail with once the resident's stream has ended
// (the resident exited, its container stopped, the session broke).
var ErrEnded = errors.New("stream ended")

// ErrNotFound is the cause of the error Run returns when the resident
// found no such command (or it is not executable): the caller tells it
// from other failures to start by errors.Is, not by its words.
var ErrNotFound = errors.New("no such command")

// killWait is how long Run waits, after sending a kill, for the resident
// to report the call over: the stop budget of a call past its end (as
// remoteproc.StopBudget). A resident that has not reported by then kills
// the call at its own deadline, or when its stream ends.
const killWait = 750 * time.Millisecond

// Client is the backend's end of a resident's stream. Calls run
// concurrently; their frames share the stream.
type Client struct {
	wmu sync.Mutex // serializes frames on w
	w   io.Writer

	mu    sync.Mutex
	calls map[uint32]*clientCall
	next  uint32
	err   error // why the stream ended, once done is closed

	done    chan struct{}
	helloCh chan hello
}

// NewClient starts reading the resident's frames from r; w carries the
// calls to it. Call Ready before the first Run.
func NewClient(r io.Reader, w io.Writer) *Client {
	c := &Client{w: w, calls: map[uint32]*clientCall{}, done: make(chan struct{}), helloCh: make(chan hello, 1)}
	go c.read(r)
	return c
}

// Ready waits for the resident's hello and checks it speaks this
// protocol. It returns the resident's PID in its PID namespace.
func (c *Client) Ready(ctx context.Context) (int, error) {
	select {
	case h := <-c.helloCh:
		if h.Protocol != ProtocolVersion {
			return 0, fmt.Errorf("resident speaks protocol %d, want %d", h.Protocol, ProtocolVersion)
		}
		return h.PID, nil
	case <-c.done:
		return 0, c.Err()
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Done is closed when the stream has ended; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the stream ended (wrapping ErrEnded), nil while it has not.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Call is one command for the resident to run.
type Call struct {
	Command string
	Args    []string
	// Env is KEY=value entries over the resident's own environment.
	Env   []string
	Stdin []byte
	// Timeout is a backstop the resident enforces itself; Run's context
	// is what normally ends a call early.
	Timeout     time.Duration
	OutputLimit int
}

// Result is how a call ended: its exit code (128+N and the signal's
// name when signal N killed it) and whether its output was cut at the
// limit.
type Result struct {
	Code            int
	Signal          string
	StdoutTruncated bool
	StderrTruncated bool
}

// Run runs call, writing its output to stdout and stderr as it arrives
// (never after Run returns). A call that could not start or failed in the
// resident is a *sandbox.Error of the kind the resident reported. When
// ctx ends first, the call's process tree is killed and Run returns
// ctx.Err() once the resident has reported it (or killWait has passed).
// A stream that ends first is an error wrapping ErrEnded.
func (c *Client) Run(ctx context.Context, call Call, stdout, stderr io.Writer) (Result, error) {
	spec, err := json.Marshal(startSpec{
		Command:     call.Command,
		Args:        call.Args,
		Env:         call.Env,
		StdinSize:   int64(len(call.Stdin)),
		TimeoutMS:   call.Timeout.Milliseconds(),
		OutputLimit: call.OutputLimit,
	})
	if err != nil {
		return Result{}, sandbox.NewError(sandbox.KindStart, "resident: encode call", err)
	}
	cc, err := c.register(stdout, stderr)
	if err != nil {
		return Result{}, err
	}
	defer cc.detach()
	if err := c.sendCall(cc.id, spec, call.Stdin); err != nil {
		c.forget(cc.id)
		return Result{}, c.ended(err)
	}
	select {
	case rep := <-cc.exit:
		return rep.result()
	case <-c.done:
		// The report may have come just before the end.
		select {
		case rep := <-cc.exit:
			return rep.result()
		default:
		}
		return Result{}, c.Err()
	case <-ctx.Done():
	}
	// Kill, and wait for the report: once it has come, nothing of the
	// call runs any more.
	if err := c.send(frame{kind: frameKill, call: cc.id}); err == nil {
		t := time.NewTimer(killWait)
		defer t.Stop()
		select {
		case <-cc.exit:
		case <-c.done:
		case <-t.C:
		}
	}
	c.forget(cc.id)
	return Result{}, ctx.Err()
}

func (c *Client) sendCall(id uint32, spec, stdin []byte) error {
	if err := c.send(frame{kind: frameStart, call: id, payload: spec}); err != nil {
		return err
	}
	for off := 0; off < len(stdin); off += chunkSize {
		end := min(off+chunkSize, len(stdin))
		if err := c.send(frame{kind: frameStdin, call: id, payload: stdin[off:end]}); err != nil {
			return err
		}
	}
	return c.send(frame{kind: frameStdinEnd, call: id})
}

func (c *Client) send(f frame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return writeFrame(c.w, f)
}

// ended is the error for a failed send: the stream's end, once the reader
// has seen it, else the write error itself.
func (c *Client) ended(err error) error {
	select {
	case <-c.done:
		return c.Err()
	case <-time.After(100 * time.Millisecond):
		return sandbox.NewError(sandbox.KindTransport, "resident: send", fmt.Errorf("%w: %v", ErrEnded, err))
	}
}

// clientCall is a call in flight: where its output goes and where its
// report arrives.
type clientCall struct {
	id   uint32
	exit chan exitReport

	mu             sync.Mutex // held while output is written; detach waits for it
	stdout, stderr io.Writer
}

func (cc *clientCall) write(kind byte, p []byte) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	w := cc.stdout
	if kind == frameStderr {
		w = cc.stderr
	}
	if w != nil {
		_, _ = w.Write(p)
	}
}

// detach stops output reaching the caller's writers.
func (cc *clientCall) detach() {
	cc.mu.Lock()
	cc.stdout, cc.stderr = nil, nil
	cc.mu.Unlock()
}

func (c *Client) register(stdout, stderr io.Writer) (*clientCall, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return nil, c.err
	default:
	}
	c.next++
	if c.next == 0 { // 0 is the hello's
		c.next++
	}
	cc := &clientCall{id: c.next, exit: make(chan exitReport, 1), stdout: stdout, stderr: stderr}
	c.calls[cc.id] = cc
	return cc, nil
}

func (c *Client) forget(id uint32) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

func (c *Client) lookup(id uint32) *clientCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

// read dispatches frames until the stream ends.
func (c *Client) read(r io.Reader) {
	err := c.dispatch(r)
	c.mu.Lock()
	c.err = sandbox.NewError(sandbox.KindTransport, "resident", fmt.Errorf("%w: %v", ErrEnded, err))
	c.mu.Unlock()
	close(c.done)
}

func (c *Client) dispatch(r io.Reader) error {
	for {
		f, err := readFrame(r)
		if err != nil {
			return err
		}
		switch f.kind {
		case frameHello:
			var h hello
			if err := json.Unmarshal(f.payload, &h); err != nil {
				return fmt.Errorf("bad hello: %w", err)
			}
			select {
			case c.helloCh <- h:
			default:
			}
		case frameStdout, frameStderr:
			if cc := c.lookup(f.call); cc != nil {
				cc.write(f.kind, f.payload)
			}
		case frameExit:
			var rep exitReport
			if err := json.Unmarshal(f.payload, &rep); err != nil {
				return fmt.Errorf("bad exit report: %w", err)
			}
			c.mu.Lock()
			cc := c.calls[f.call]
			delete(c.calls, f.call)
			c.mu.Unlock()
			if cc != nil {
				cc.exit <- rep
			}
		default:
			return fmt.Errorf("unknown frame type %q", f.kind)
		}
	}
}

func (rep exitReport) result() (Result, error) {
	res := Result{Code: rep.Code, Signal: rep.Signal, StdoutTruncated: rep.StdoutTruncated, StderrTruncated: rep.StderrTruncated}
	switch {
	case rep.Kind == "":
		return res, nil
	case rep.NotFound:
		return res, &sandbox.Error{Kind: sandbox.KindStart, Msg: rep.Msg, Err: ErrNotFound}
	}
	return res, sandbox.NewError(kindNamed(rep.Kind), rep.Msg, nil)
}

func kindNamed(name string) sandbox.Kind {
	for k := sandbox.KindUnknown; k <= sandbox.KindCanceled; k++ {
		if k.String() == name {
			return k
		}
	}
	return sandbox.KindUnknown
}
