package kubebox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// Timing of the work around a call.
const (
	openTimeout    = 30 * time.Second // resolving the pod and checking its shell
	cleanupTimeout = 10 * time.Second // the kill exec after a timeout
	// orphanGrace is how long the streams may stay open after the command
	// has exited: longer means processes it left behind hold them, and
	// they are killed, as the direct backend kills what is left of a
	// process group. A loaded runtime can take a while to close an exec's
	// streams, and the kill is an exec of its own, so it is not hasty.
	orphanGrace = 500 * time.Millisecond
	// streamGrace bounds the wait for an exec stream to end once its
	// context is done and the remote processes are killed.
	streamGrace = 5 * time.Second
)

// Sandbox runs each call inside a container of an existing pod.
type Sandbox struct {
	name string
	set  settings
	c    cluster
	ns   string

	pool *pool      // warm sessions; nil when warm is 0 or a resident runs
	res  *residents // nil unless transport native with resident on

	mu  sync.Mutex
	cur target
}

var (
	_ sandbox.Sandbox  = (*Sandbox)(nil)
	_ sandbox.Streamer = (*Sandbox)(nil)
	_ sandbox.Closer   = (*Sandbox)(nil)
)

// version is the plugin's, for the client's User-Agent.
var version = "dev"

// Factory builds a kubectl_exec sandbox. It validates the configuration,
// finds the pod and container, and checks that the container can run
// calls (remoteproc.Requirement).
func Factory(name string, cfg map[string]any) (sandbox.Sandbox, error) {
	set, err := parseConfig(cfg)
	if err != nil {
		return nil, err
	}
	rc, ns, err := loadConfig(set)
	if err != nil {
		return nil, sandbox.NewError(sandbox.KindStart, err.Error(), nil)
	}
	if set.namespace != "" {
		ns = set.namespace
	}
	s := &Sandbox{name: name, set: set, ns: ns}
	if set.transport == TransportCLI {
		s.c, err = newCLI(set, rc.Host)
	} else {
		s.c, err = newNative(rc, version)
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	t, err := s.resolve(ctx)
	if err == nil {
		err = s.checkShell(ctx, t)
	}
	if err != nil {
		s.c.close()
		return nil, err
	}
	s.cur = t
	if set.transport == TransportNative && set.resident {
		// Its own deadline (residentStartTimeout), not what is left of
		// the open's: the first copy into a pod can take a while.
		s.openResident(context.Background(), t)
	}
	if set.warm > 0 && (s.res == nil || s.res.Err() != nil) {
		s.pool = newPool(s, set.warm)
		s.pool.refill(t)
	}
	return s, nil
}

// checkShell makes sure the container can run the wrapper and the kill
// script.
func (s *Sandbox) checkShell(ctx context.Context, t target) error {
	var out syncBuffer // both streams, written from two goroutines
	code, err := s.c.exec(ctx, t, remoteproc.CheckArgv(), nil, &out, &out)
	if err != nil {
		return s.diagnose(ctx, t, err, "")
	}
	if code != 0 {
		if r := kubectlReason(lastLine(out.String())); r != apiOther {
			// kubectl's own failure, not the check's.
			return s.diagnose(ctx, t, nil, out.String())
		}
		msg := strings.TrimSpace(out.String())
		if len(msg) > 512 {
			msg = msg[:512]
		}
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf(
			"%s cannot run kubectl_exec commands: it needs %s; the check exited %d: %s", t, remoteproc.Requirement, code, msg), nil)
	}
	return nil
}

// Name returns the sandbox's name.
func (s *Sandbox) Name() string { return s.name }

// OutputLimit is the cap on each of stdout and stderr.
func (s *Sandbox) OutputLimit() int { return s.set.outputLimit }

// Close ends the warm sessions and releases the client.
func (s *Sandbox) Close() error {
	if s.pool != nil {
		s.pool.close()
	}
	s.closeResident()
	s.c.close()
	return nil
}

func (s *Sandbox) target() target {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Spawn runs req in the pod and returns its output.
func (s *Sandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.spawn(ctx, req, nil, nil)
}

// SpawnStreaming is Spawn with the output written to stdout and stderr as
// it arrives (see sandbox.Streamer).
func (s *Sandbox) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return s.spawn(ctx, req, stdout, stderr)
}

func (s *Sandbox) spawn(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (resp sandbox.Response, err error) {
	what := fmt.Sprintf("command %q", req.Command)
	timeout := s.set.timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	var outStdout, outStderr *shell.Output
	if stdout != nil {
		outStdout, outStderr = shell.NewStreamingOutput(s.set.outputLimit, stdout), shell.NewStreamingOutput(s.set.outputLimit, stderr)
	} else {
		outStdout, outStderr = shell.NewOutput(s.set.outputLimit), shell.NewOutput(s.set.outputLimit)
	}
	defer func() {
		if stdout == nil {
			resp.Stdout, resp.Stderr = outStdout.Bytes(), outStderr.Bytes()
		}
		resp.StdoutTruncated, resp.StderrTruncated = outStdout.Truncated(), outStderr.Truncated()
		resp.Err = err
	}()
	if req.Command == "" {
		return resp, sandbox.NewError(sandbox.KindStart, Mode+": empty command", nil)
	}
	// The preamble checks the call (environment names the wrapper can
	// export) on both paths, so a call means the same with or without a
	// resident.
	env := shell.MergeEnv(s.set.env, req.Env, os.LookupEnv)
	pre, err := remoteproc.Preamble(req.Command, req.Args, env)
	if err != nil {
		return resp, sandbox.NewError(sandbox.KindStart, what+": "+err.Error(), nil)
	}
	if ctx.Err() != nil {
		return resp, sandbox.ContextError(ctx, what, 0)
	}
	if sess := s.residentFor(ctx, s.target()); sess != nil {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		code, err := s.runResident(cctx, sess, req, env, what, timeout, outStdout, outStderr)
		switch {
		case err != nil:
			return resp, err
		case code != 0:
			return resp, &sandbox.ExitError{Code: code}
		}
		return resp, nil
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	c := call{s: s, input: append(pre, req.Stdin...), what: what,
		stdout: outStdout, stderr: outStderr}
	t := s.target()
	code, gone, err := c.run(cctx, t)
	if gone && s.set.selector != nil && cctx.Err() == nil {
		// The command never started: run it in the pod that replaced
		// the one that went away.
		nt, rerr := s.resolve(cctx)
		if rerr != nil {
			return resp, rerr
		}
		s.mu.Lock()
		s.cur = nt
		s.mu.Unlock()
		code, _, err = c.run(cctx, nt)
	}
	switch {
	case cctx.Err() != nil:
		return resp, sandbox.ContextError(cctx, what, timeout)
	case err != nil:
		return resp, err
	case code != 0:
		return resp, &sandbox.ExitError{Code: code}
	}
	return resp, nil
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
