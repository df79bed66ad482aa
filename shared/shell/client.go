package shell

import (
	"context"
	"errors"
	"io"
	"math"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A client is a binary a backend drives (docker, kubectl): it runs in a
// process group of its own, dies with the plugin, and is killed with its
// group at once (no grace: it is ours, not the hook's) when its context
// ends or Stop is called. Its output passes on uncapped (the call's own
// writers cap it) and its stdin is copied as it comes, so a client can
// start before its input exists (an exec waiting for its call).

// StartClient starts the client path with args, env (KEY=value entries
// over the host's environment), stdin (nil for none) and its two output
// streams. ctx ends it; Wait collects it.
func StartClient(ctx context.Context, path string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return Start(ctx, sandbox.Request{Command: path, Args: args, Env: env}, Options{
		Timeout:     -1,
		KillGrace:   -1,
		OutputLimit: math.MaxInt,
		StdoutSink:  stdout,
		StderrSink:  stderr,
		StdinReader: stdin,
		Uncontained: true,
	})
}

// RunClient runs a client to its end and returns its exit status. An
// error means it did not exit by itself: it could not start, or ctx
// ended (ctx.Err() then).
func RunClient(ctx context.Context, path string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	p, err := StartClient(ctx, path, args, env, stdin, stdout, stderr)
	if err != nil {
		return 0, err
	}
	return ClientExit(ctx, p)
}

// ClientExit waits for a started client and returns its exit status, as
// RunClient does.
func ClientExit(ctx context.Context, p *Process) (int, error) {
	_, err := p.Wait()
	var xe *sandbox.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &xe):
		return xe.Code, nil
	case ctx.Err() != nil:
		return 0, ctx.Err()
	}
	return 0, err
}
