package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// exec is spawn for PromptKit programs that cannot be recompiled: their
// direct sandbox runs it as the hook's command. It runs the command in a
// sandbox of the config, through a serve of that config when one is
// listening (its warm pools and residents outlive the call), in this
// process otherwise.
func (e *cliEnv) exec(args []string) int {
	fs, f := newSpawnFlags("exec", e)
	socket := fs.String("socket", "", "the socket of a serve to run the call through (default: $"+envServeSocket+", else "+defaultSocket()+" if a serve listens there)")
	if ok, code := f.parse(e, fs, args); !ok {
		return code
	}
	if *f.cfgPath == "" {
		e.errorf("exec: --config is required")
		return exitUsage
	}
	cfg, err := canonicalConfig(*f.cfgPath)
	if err != nil {
		e.errorf("exec: config: %v", err)
		return exitUsage
	}
	log, err := f.common.logger(e.stderr)
	if err != nil {
		e.errorf("%v", err)
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()

	start := time.Now()
	path, explicit := serveSocket(*socket)
	sc, code, cold, stalled := e.openServed(ctx, log, f, cfg, path, explicit)
	switch {
	case sc != nil:
		log.Debug("running the call through serve", "socket", path)
		defer sc.close(log)
		return e.spawnThrough(ctx, f, sc)
	case cold:
		// Nothing there, a stale socket, one we will not talk to (a
		// serve of another user), or a serve that does not answer: the
		// default socket is only a guess, and a cold call sends nothing
		// to it. The file as given: paths in it resolve against its
		// directory, which a symlink's may not be. After a serve that
		// did not answer, --timeout counts from exec's start: what the
		// wait took is not the call's again (PromptKit's own timeout is
		// counting too).
		if stalled && *f.timeout > 0 {
			left := *f.timeout - time.Since(start)
			if left <= 0 {
				e.errorf("exec: timed out after %s: the wait for the serve on %s took it all", *f.timeout, path)
				return exitTimeout
			}
			*f.timeout = left
		}
		return e.spawnCold(ctx, f, *f.cfgPath)
	}
	return code
}

// openServed opens the sandbox of our config that f names in the serve
// on path, within serveAnswerTimeout. When it cannot, cold says to run
// the call cold instead (a default socket that has no usable serve;
// stalled when a serve there did not answer in time), or code is the
// exit code, the reason written.
func (e *cliEnv) openServed(ctx context.Context, log hclog.Logger, f *spawnFlags, cfg, path string, explicit bool) (sc *servedCall, code int, cold, stalled bool) {
	pctx, cancel := context.WithTimeout(ctx, serveAnswerTimeout)
	defer cancel()
	// unusable handles a serve that could not be used: cold where the
	// socket is only a guess, an error where it was named.
	unusable := func(err error) (*servedCall, int, bool, bool) {
		switch {
		case sandbox.Done(ctx):
			e.errorf("exec: %v", sandbox.ContextError(ctx, "connect to serve", 0))
			return nil, exitInterrupted, false, false
		case !explicit:
			log.Debug("no usable serve on the default socket: running cold", "socket", path, "reason", err)
			return nil, 0, true, notAnswering(ctx, pctx)
		case notAnswering(ctx, pctx):
			e.errorf("exec: serve on %s: did not answer within %s (stopped or overloaded?)", path, serveAnswerTimeout)
			return nil, exitSandbox, false, false
		case errors.Is(err, errNoServe):
			e.errorf("exec: %v (start one with: promptkit-sandbox serve --config %s --socket %s)", err, cfg, path)
			return nil, exitSandbox, false, false
		}
		return nil, e.spawnExitCode(f.cmd, err), false, false
	}
	conn, err := dialServe(pctx, path)
	if err != nil {
		return unusable(err)
	}
	cc, err := grpcOver(conn, path)
	if err != nil {
		_ = conn.Close()
		return unusable(fmt.Errorf("serve on %s: %w", path, err))
	}
	client := plugin.NewClient(cc)
	d, err := client.Describe(pctx)
	if err != nil {
		_ = cc.Close()
		return unusable(fmt.Errorf("serve on %s: %w", path, err))
	}
	mode, code := e.servedModeOf(d, f, cfg, path)
	if code != exitOK {
		_ = cc.Close()
		return nil, code, false, false
	}
	sb, err := client.Open(pctx, *f.name, mode, nil)
	if err != nil {
		_ = cc.Close()
		if notAnswering(ctx, pctx) {
			return unusable(err)
		}
		return nil, e.spawnExitCode(f.cmd, fmt.Errorf("serve on %s: open sandbox %s: %w", path, *f.name, err)), false, false
	}
	return &servedCall{path: path, cc: cc, client: client, sb: sb}, exitOK, false, false
}

// servedModeOf finds the mode a serve offers for sandbox f.name of cfg. A
// serve of another config is refused: its sandboxes of the same name
// may run somewhere else entirely.
func (e *cliEnv) servedModeOf(d plugin.Description, f *spawnFlags, cfg, path string) (string, int) {
	var names, others []string
	for _, m := range d.Modes {
		c, name, ok := splitServedMode(m.Name)
		switch {
		case !ok:
		case c != cfg:
			if !slices.Contains(others, c) {
				others = append(others, c)
			}
		case name == *f.name:
			return m.Name, exitOK
		default:
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		e.errorf("%s: the serve on %s serves %s, not %s: start a serve of this config on its own --socket",
			f.cmd, path, orNothing(others), cfg)
		return "", exitSandbox
	}
	e.errorf("%s: no sandbox named %q in %s (it declares %s)", f.cmd, *f.name, cfg, strings.Join(names, ", "))
	return "", exitUsage
}

func orNothing(configs []string) string {
	if len(configs) == 0 {
		return "no config"
	}
	return strings.Join(configs, ", ")
}

// grpcOver is a gRPC connection whose first transport is conn, already
// dialed and checked; should gRPC need another (it reconnects after a
// failure), that one is dialed and checked the same way.
func grpcOver(conn net.Conn, path string) (*grpc.ClientConn, error) {
	var once sync.Once
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var first net.Conn
		once.Do(func() { first = conn })
		if first != nil {
			return first, nil
		}
		return dialServe(ctx, path)
	}
	opts := append(plugin.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dial),
	)
	return grpc.NewClient("passthrough:///promptkit-sandbox-serve", opts...)
}
