package resident

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// maxStdin bounds the stdin a start frame may announce.
const maxStdin = 1 << 30

// Serve runs the calls read from r, writing their output and results to
// w, until r ends. Then it kills every call still running, with its
// descendants, and returns once each has been reaped. A clean end of r
// returns nil.
func Serve(r io.Reader, w io.Writer) error {
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{w: w, ctx: ctx, calls: map[uint32]*serverCall{}, orphans: newOrphans()}
	// Last: whatever the calls' sweeps left (nothing runs any more).
	defer s.sweep("")
	defer s.wg.Wait()
	defer cancel()
	h, _ := json.Marshal(hello{Protocol: ProtocolVersion, PID: os.Getpid()})
	if err := s.send(frame{kind: frameHello, payload: h}); err != nil {
		return fmt.Errorf("resident: send hello: %w", err)
	}
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		f, err := readFrame(br)
		if err != nil {
			s.killAll()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("resident: read: %w", err)
		}
		s.handle(f)
	}
}

type server struct {
	ctx context.Context
	wg  sync.WaitGroup

	wmu sync.Mutex // serializes frames on w
	w   io.Writer

	mu      sync.Mutex
	calls   map[uint32]*serverCall
	orphans orphans // under mu, but for nonce

	starting sync.RWMutex // see orphans
}

// serverCall is a call from its start frame to its exit frame.
type serverCall struct {
	id    uint32
	spec  startSpec
	stdin []byte

	mu      sync.Mutex
	proc    *shell.Process // set once it runs
	killed  bool
	running bool
}

func (s *server) send(f frame) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return writeFrame(s.w, f)
}

func (s *server) handle(f frame) {
	switch f.kind {
	case frameStart:
		s.start(f)
	case frameStdin:
		s.stdin(f)
	case frameStdinEnd:
		s.stdinEnd(f.call)
	case frameKill:
		s.kill(f.call)
	default:
		// A newer client's frame this resident does not know: the call it
		// names, if any, fails rather than hangs.
		s.fail(f.call, sandbox.KindStart, fmt.Sprintf("resident: unknown frame type %q", f.kind))
	}
}

func (s *server) start(f frame) {
	var spec startSpec
	if err := json.Unmarshal(f.payload, &spec); err != nil {
		s.report(f.call, exitReport{Kind: sandbox.KindStart.String(), Msg: "resident: bad start frame: " + err.Error()})
		return
	}
	if spec.StdinSize < 0 || spec.StdinSize > maxStdin {
		s.report(f.call, exitReport{Kind: sandbox.KindStart.String(), Msg: fmt.Sprintf("resident: stdin of %d bytes announced", spec.StdinSize)})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.calls[f.call]; dup {
		// The client never reuses an ID in flight; the first call keeps it.
		return
	}
	s.calls[f.call] = &serverCall{id: f.call, spec: spec, stdin: make([]byte, 0, min(spec.StdinSize, 1<<20))}
}

func (s *server) lookup(id uint32) *serverCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[id]
}

func (s *server) stdin(f frame) {
	c := s.lookup(f.call)
	if c == nil || c.running {
		return
	}
	if int64(len(c.stdin)+len(f.payload)) > c.spec.StdinSize {
		s.fail(f.call, sandbox.KindStart, fmt.Sprintf("resident: more stdin than the %d bytes announced", c.spec.StdinSize))
		return
	}
	c.stdin = append(c.stdin, f.payload...)
}

func (s *server) stdinEnd(id uint32) {
	c := s.lookup(id)
	if c == nil || c.running {
		return
	}
	if int64(len(c.stdin)) != c.spec.StdinSize {
		s.fail(id, sandbox.KindStart, fmt.Sprintf("resident: stdin ended after %d of %d bytes", len(c.stdin), c.spec.StdinSize))
		return
	}
	c.running = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.report(id, s.run(c))
	}()
}

// kill ends a call: its process tree if it runs, the call itself if it
// is still receiving stdin.
func (s *server) kill(id uint32) {
	c := s.lookup(id)
	if c == nil {
		return
	}
	if !c.running {
		s.fail(id, sandbox.KindCanceled, "resident: killed before it started")
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.killed = true
	if c.proc != nil {
		// Freeze first: once the leader dies, its children's parent links
		// no longer lead to the call. Stop records the kill as the call's
		// end and kills the group; the rest of the tree follows.
		frozen := freezeTree(c.proc.Pid())
		c.proc.Stop()
		killFrozen(frozen)
	}
}

// killAll kills every running call; their goroutines report and finish.
func (s *server) killAll() {
	s.mu.Lock()
	ids := make([]uint32, 0, len(s.calls))
	for id := range s.calls {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.kill(id)
	}
}

// fail ends a call that never ran with an error report.
func (s *server) fail(id uint32, kind sandbox.Kind, msg string) {
	s.report(id, exitReport{Kind: kind.String(), Msg: msg})
}

// report sends a call's exit frame and forgets the call.
func (s *server) report(id uint32, rep exitReport) {
	s.mu.Lock()
	delete(s.calls, id)
	s.mu.Unlock()
	b, _ := json.Marshal(rep)
	// A failed send means the client is gone; the read loop sees that too.
	_ = s.send(frame{kind: frameExit, call: id, payload: b})
}

// run runs the call to its end and says how it ended.
func (s *server) run(c *serverCall) exitReport {
	env := shell.MergeEnv(os.Environ(), c.spec.Env, os.LookupEnv)
	pathVar, _ := shell.EnvValue(env, "PATH")
	path, err := lookPath(c.spec.Command, pathVar)
	if err != nil {
		return exitReport{Kind: sandbox.KindStart.String(), Msg: err.Error(), NotFound: true}
	}
	timeout := time.Duration(c.spec.TimeoutMS) * time.Millisecond
	opts := shell.Options{
		// The timeout is enforced below, on the whole tree: the shell's
		// own kills the process group alone, and a setsid child would
		// outlive it.
		Timeout:   -1,
		KillGrace: -1,
		// Its own tree freeze holds the call, at no cost per call: a
		// supervisor (no container offers the resident a cgroup) is a
		// fresh start of this binary, which took a docker_exec call from
		// 4.5 ms to 28 ms here. What it misses is an orphan (a double
		// fork) that has left the tree before the kill.
		Uncontained: true,
		OutputLimit: c.spec.OutputLimit,
		CleanEnv:    true,
		StdoutSink:  &sink{s: s, kind: frameStdout, call: c.id},
		StderrSink:  &sink{s: s, kind: frameStderr, call: c.id},
	}
	token := s.token()
	env = shell.MergeEnv(env, []string{CallEnv + "=" + token}, nil)
	req := sandbox.Request{Command: path, Args: c.spec.Args, Env: env, Stdin: c.stdin, Timeout: -1}
	c.mu.Lock()
	if c.killed {
		c.mu.Unlock()
		s.ended(token, 0)
		return exitReport{Kind: sandbox.KindCanceled.String(), Msg: "resident: killed before it started"}
	}
	s.starting.RLock()
	p, err := shell.Start(s.ctx, req, opts)
	if err == nil {
		s.mu.Lock()
		s.orphans.leaders[p.Pid()] = true
		s.mu.Unlock()
	}
	s.starting.RUnlock()
	if err != nil {
		c.mu.Unlock()
		s.ended(token, 0)
		return exitReport{Kind: sandbox.KindOf(err).String(), Msg: err.Error()}
	}
	c.proc = p
	c.mu.Unlock()
	// Once the call is over, by any end, what it left goes too.
	defer s.sweep(token)
	defer s.ended(token, p.Pid())
	c.stdin = nil // the process has its copy in the pipe feeder
	if timeout > 0 {
		// The backstop, when the plugin's own kill did not come: the
		// same freeze and kill of the whole tree as a kill frame.
		what := c.spec.Command
		backstop := time.AfterFunc(timeout, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			frozen := freezeTree(p.Pid())
			p.StopWith(sandbox.NewError(sandbox.KindTimeout, fmt.Sprintf("command %q: timed out after %s", what, timeout), nil))
			killFrozen(frozen)
		})
		defer backstop.Stop()
	}

	resp, err := p.Wait()
	rep := exitReport{StdoutTruncated: resp.StdoutTruncated, StderrTruncated: resp.StderrTruncated}
	var ee *sandbox.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		rep.Code, rep.Signal = ee.Code, ee.Signal
	default:
		rep.Kind, rep.Msg = sandbox.KindOf(err).String(), err.Error()
	}
	return rep
}

// sink sends a call's output as frames of at most chunkSize bytes.
type sink struct {
	s    *server
	kind byte
	call uint32
}

func (k *sink) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += chunkSize {
		end := min(off+chunkSize, len(p))
		// A failed send means the client is gone: the output has nowhere
		// to go, and the call is about to be killed.
		_ = k.s.send(frame{kind: k.kind, call: k.call, payload: p[off:end]})
	}
	return len(p), nil
}
