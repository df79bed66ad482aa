package dockerbox

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// apiRunner runs docker_run containers through the Engine API.
type apiRunner struct {
	name    string
	set     *runSettings
	cli     *client.Client
	pending sync.WaitGroup // creates answered after their call ended

	// tether is what runs each container's command (see tether.go); nil
	// when there is none, or no longer: noTether says why.
	tether     atomic.Pointer[tetherBin]
	noTetherMu sync.Mutex
	noTether   string
	// entrypoint is the image's, found when the sandbox opens: it runs
	// under the tether.
	entrypoint []string
}

func newAPIRunner(name string, set *runSettings) (*apiRunner, error) {
	cli, err := newClient()
	if err != nil {
		return nil, err
	}
	r := &apiRunner{name: name, set: set, cli: cli}
	if b, err := selfTether(set.init); err != nil {
		r.dropTether(err)
	} else {
		r.tether.Store(b)
	}
	return r, nil
}

// dropTether makes every later container of the sandbox run without the
// tether, because of why.
func (r *apiRunner) dropTether(why error) {
	r.tether.Store(nil)
	r.noTetherMu.Lock()
	defer r.noTetherMu.Unlock()
	r.noTether = why.Error()
}

// tetherOff says why the sandbox's containers run without the tether, or
// "" when they run with it.
func (r *apiRunner) tetherOff() string {
	r.noTetherMu.Lock()
	defer r.noTetherMu.Unlock()
	if r.tether.Load() != nil {
		return ""
	}
	return r.noTether
}

// close waits for the creates a call stopped waiting for, and their
// removals, then closes the client.
func (r *apiRunner) close() error {
	r.pending.Wait()
	return r.cli.Close()
}

func (r *apiRunner) check(ctx context.Context) error {
	img, err := r.cli.ImageInspect(ctx, r.set.image)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return imageMissing(r.set.image)
		}
		return openErr(r.cli, "inspect image "+r.set.image, err)
	}
	if img.Config != nil {
		r.entrypoint = img.Config.Entrypoint
	}
	return nil
}

// containerConfig is the container for spec, its command run under tb
// unless tb is nil.
func (r *apiRunner) containerConfig(spec runSpec, tb *tetherBin) (*container.Config, *container.HostConfig) {
	cfg := &container.Config{
		Image:        r.set.image,
		Cmd:          append([]string{spec.command}, spec.args...),
		Env:          spec.env,
		User:         r.set.user,
		WorkingDir:   r.set.workdir,
		Labels:       labels(r.name),
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		OpenStdin:    true,
		StdinOnce:    true,
		Tty:          false,
		// With no network wanted, the engine is told to leave networking
		// out altogether: runc then gives the container a fresh network
		// namespace holding only loopback, which is what network "none"
		// is, without libnetwork's sandbox for it or the libnetwork-setkey
		// hook, a re-exec of dockerd in every start. That was 40% of a
		// cold run here (BenchmarkDockerRun). NetworkMode stays "none", so
		// the container inspects as it would through the CLI.
		NetworkDisabled: r.set.network == networkNone,
	}
	pids := r.set.pidsLimit
	host := &container.HostConfig{
		// The engine removes the container once it stops, whoever stops
		// it: a plugin that dies (its host SIGKILLed) after killing a
		// call's container, with the removal still queued, leaves
		// nothing behind. Discard's own removal stays for a container
		// that never started.
		AutoRemove:     true,
		Init:           &r.set.init,
		NetworkMode:    container.NetworkMode(r.set.network),
		Binds:          r.set.binds,
		ReadonlyRootfs: r.set.readOnly,
		CapDrop:        r.set.capDrop,
		CapAdd:         r.set.capAdd,
		SecurityOpt:    r.set.securityOpt,
		Resources: container.Resources{
			Memory:    r.set.memory,
			NanoCPUs:  r.set.nanoCPUs,
			PidsLimit: &pids,
		},
	}
	if tb != nil {
		cfg.Entrypoint = tetherArgs(r.entrypoint)
		host.Mounts = []mount.Mount{tb.mount()}
	}
	return cfg, host
}

// apiPrepared is a container created, attached and started through the
// API, with a wait for its exit registered before it started.
type apiPrepared struct {
	r        *apiRunner
	spec     runSpec
	id       string
	tethered bool // the command runs under the tether

	att            *attachment
	stdout, stderr *warmpool.Held
	wait           client.ContainerWaitResult
	stopWait       context.CancelFunc // ends the wait request
	waited         atomic.Bool        // the wait's one value was taken

	discardOnce sync.Once
}

func (r *apiRunner) prepare(ctx context.Context, spec runSpec) (prepared, error) {
	tb := r.tether.Load()
	p, err := r.prepareWith(ctx, spec, tb)
	if err != nil && tb != nil && ctx.Err() == nil && tb.refused(err) {
		// Nothing of the command ran: the engine would not create or
		// start the container as the tether needs it.
		r.dropTether(err)
		return r.prepareWith(ctx, spec, nil)
	}
	return p, err
}

func (r *apiRunner) prepareWith(ctx context.Context, spec runSpec, tb *tetherBin) (prepared, error) {
	cfg, host := r.containerConfig(spec, tb)
	// Named, so a create whose answer is lost (its context ended while
	// the engine worked on it) can still be removed.
	//
	// The create itself is not abandoned when ctx ends: the engine would
	// finish it anyway and the container would be left behind. It is let
	// finish in the background (for cleanupTimeout past the call's
	// deadline) and the container removed. A slow engine does not fail
	// a call that still has time: the create has all of it.
	name := containerName()
	createCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), afterDeadline(ctx, cleanupTimeout))
	type createResult struct {
		id  string
		err error
	}
	answer := make(chan createResult, 1)
	r.pending.Add(1)
	go func() {
		defer r.pending.Done()
		defer cancel()
		created, err := r.cli.ContainerCreate(createCtx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: host})
		if err != nil && createCtx.Err() != nil {
			removeNamed(r.cli, name) // the create may have gone through
		}
		answer <- createResult{created.ID, err}
	}()
	var created createResult
	answered := false
	select {
	case created = <-answer:
		answered = true
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		// The caller does not wait for a slow engine: the container, if
		// the engine makes it (or has), is removed off its path.
		r.pending.Add(1)
		go func() {
			defer r.pending.Done()
			if !answered {
				created = <-answer
			}
			if created.err == nil {
				removeNamed(r.cli, created.id)
			}
		}()
		return nil, sandbox.ContextError(ctx, spec.what, spec.timeout)
	}
	if err := created.err; err != nil {
		if ctx.Err() == nil && cerrdefs.IsNotFound(err) {
			return nil, imageMissing(r.set.image)
		}
		return nil, engineErr(ctx, r.cli, spec.what, spec.timeout, sandbox.KindStart, "create container from image "+r.set.image, err)
	}
	p := &apiPrepared{r: r, spec: spec, id: created.id, tethered: tb != nil}
	ok := false
	defer func() {
		if !ok {
			p.Discard()
		}
	}()

	att, err := r.cli.ContainerAttach(ctx, p.id, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, engineErr(ctx, r.cli, spec.what, spec.timeout, sandbox.KindStart, "attach to container", err)
	}
	p.att = newAttachment(att.HijackedResponse)
	p.stdout, p.stderr = warmpool.NewHeld(r.set.outputLimit), warmpool.NewHeld(r.set.outputLimit)
	p.att.demux(p.stdout, p.stderr)

	// Registered before the start, so the exit cannot be missed; it lives
	// as long as the prepared call, not as long as ctx.
	wctx, stop := context.WithCancel(context.Background())
	p.stopWait = stop
	p.wait = r.cli.ContainerWait(wctx, p.id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})

	if _, err := r.cli.ContainerStart(ctx, p.id, client.ContainerStartOptions{}); err != nil {
		// The engine could not run the command (not found in the image,
		// not executable, a bad mount): nothing of the hook ran.
		return nil, engineErr(ctx, r.cli, spec.what, spec.timeout, sandbox.KindStart, "start container", err)
	}
	ok = true
	return p, nil
}

// removeContainer force-removes a container and returns once it is gone.
// Our containers are AutoRemove: once the process has exited the engine
// is already removing it, answers a remove at once with a conflict, and
// keeps listing the container until its own removal ends — for a second
// or more on a loaded engine. Whoever waits for the removal (the reaper,
// Close) must see it gone, so a removal in progress is waited out,
// within ctx.
func removeContainer(ctx context.Context, cli *client.Client, id string) {
	_, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err == nil || cerrdefs.IsNotFound(err) || !goneAlready(err) {
		return
	}
	w := cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionRemoved})
	select {
	case <-w.Result:
	case <-w.Error:
	case <-ctx.Done():
	}
}

func (p *apiPrepared) finish(ctx context.Context, stdin []byte, out shell.Outputs) (int, error) {
	what, timeout := p.spec.what, p.spec.timeout
	p.stdout.Claim(out.Stdout)
	var stderr io.Writer = out.Stderr
	var initf *initFilter
	if p.r.set.init {
		// The tether, which runs under the init, reports a command it
		// cannot run as the init does.
		initf = newInitFilter(stderr)
		// Whatever the end, what the filter holds is the hook's unless
		// Failure below found the init's line.
		defer initf.Flush()
		stderr = initf
	}
	var hello *helloFilter
	if p.tethered {
		hello = newHelloFilter(stderr)
		stderr = hello
	}
	p.stderr.Claim(stderr)
	if p.tethered {
		p.att.feedFrame(stdin)
	} else {
		p.att.feed(stdin)
	}

	var code int64
	select {
	case res := <-p.wait.Result:
		p.waited.Store(true)
		if res.Error != nil && res.Error.Message != "" {
			return 0, sandbox.NewError(sandbox.KindTransport, what+": wait for container: "+res.Error.Message, nil)
		}
		code = res.StatusCode
	case werr := <-p.wait.Error:
		p.waited.Store(true)
		return 0, engineErr(ctx, p.r.cli, what, timeout, sandbox.KindTransport, "wait for container", werr)
	case <-ctx.Done():
		p.stop()
		return 0, sandbox.ContextError(ctx, what, timeout)
	}
	// The container has exited; the engine ends the stream once the last
	// of its output is sent.
	select {
	case <-p.att.copyDone:
	case <-ctx.Done():
		p.stop()
		return 0, sandbox.ContextError(ctx, what, timeout)
	}
	if hello != nil {
		if ok, text := hello.seen(); !ok {
			return 0, sandbox.NewError(sandbox.KindStart, what+": cannot run it in the container", &tetherMissing{code: int(code), stderr: text})
		}
	}
	if initf != nil {
		if msg, ok := initf.Failure(int(code)); ok {
			return 0, initStartError(what, msg)
		}
	}
	return int(code), nil
}

// stop kills the container of a call that ran out of time or was
// cancelled, so nothing of it runs on, then lets the engine end the
// attach stream, which brings the output the call wrote before it died:
// the output of a timed-out hook is its last words. Both within
// stopBudget: what an engine has not done by then, Discard does in the
// background.
func (p *apiPrepared) stop() {
	deadline := time.Now().Add(stopBudget)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	_, _ = p.r.cli.ContainerKill(ctx, p.id, client.ContainerKillOptions{Signal: "KILL"})
	select {
	case <-p.att.copyDone:
	case <-ctx.Done():
	}
	// Nothing reaches the call's writers once Spawn has returned.
	p.stdout.Drop()
	p.stderr.Drop()
}

// discard force-removes the container (killing it if it runs) with a
// context of its own, then ends the attachment and the wait.
func (p *apiPrepared) Discard() {
	p.discardOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		removeContainer(ctx, p.r.cli, p.id)
		if p.att != nil {
			p.att.close()
		}
		if p.stopWait != nil {
			p.stopWait()
			if p.waited.Load() {
				return
			}
			// The client's goroutine delivers exactly one value, on an
			// unbuffered channel for a result: take it so it can end.
			go func() {
				select {
				case <-p.wait.Result:
				case <-p.wait.Error:
				}
			}()
		}
	})
}
