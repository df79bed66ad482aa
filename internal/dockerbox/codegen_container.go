package dockerbox

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
	"github.com/altairalabs/promptkit-sandbox/internal/egress"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Labels of codegen containers, besides those of every container.
const (
	LabelID   = "org.promptkit.sandbox.id"   // the provisioned sandbox's id
	LabelMode = "org.promptkit.sandbox.mode" // docker_codegen
)

// outputTail is how much of sandboxd's output is kept, to quote when it
// fails to come up.
const outputTail = 4096

// codegenContainer is a running sandboxd container and the attach that
// holds its stdin open: when this process dies, however it dies, the
// engine closes that stdin and sandboxd (--exit-on-stdin-eof) stops, and
// the container, AutoRemove, goes with it.
type codegenContainer struct {
	cli    *client.Client
	id     string
	att    client.HijackedResponse
	output *bounded.Tail
	exited chan struct{} // closed when the container has stopped
	// code is the container's exit status, set before exited closes;
	// -1 when the engine did not say.
	code int64
	once sync.Once
}

// outputGrace is how long, once the container has stopped, its last
// output may take to arrive through the attach, so that what it said
// before it died is quoted.
const outputGrace = time.Second

// codegenSpec is what one container is made from.
type codegenSpec struct {
	sandboxID, name string
	set             codegenSettings
	dir             *privateDir
	workspace       string
	hard            Hardening
	// traceEnv carries the provisioning's trace context to sandboxd
	// (TRACEPARENT); traces says its spans go out by the relay.
	traceEnv []string
	traces   bool
	// cache, when set, is mounted at codegenimage.CacheDir and holds
	// GOCACHE and GOMODCACHE.
	cache *cacheVolume
	// volume: workspace is a workspace volume's name, not a host path.
	volume bool
}

func (s codegenSpec) config() (*container.Config, *container.HostConfig) {
	lbl := labels(s.name)
	lbl[LabelID] = s.sandboxID
	lbl[LabelMode] = CodegenMode
	cfg := &container.Config{
		Image:      s.set.image,
		Entrypoint: s.hard.Entrypoint,
		Cmd:        s.hard.sandboxdArgs(s.set.metrics, s.traces),
		Env:        append(slices.Clip(s.hard.Env), s.traceEnv...),
		User:       strconv.Itoa(s.set.uid) + ":" + strconv.Itoa(s.set.gid),
		WorkingDir: s.hard.WorkspaceDir,
		Labels:     lbl,
		// The lifeline: stdin is attached, and with StdinOnce the engine
		// closes it when our attach ends.
		OpenStdin:    true,
		StdinOnce:    true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		// As docker_run: no network means none at all, loopback only,
		// without libnetwork's sandbox (see run_api.go).
		NetworkDisabled: s.set.network == networkNone,
	}
	pids := s.set.pidsLimit
	initProc := true // reaps what the agent's shells leave behind
	binds := []string{s.dir.run + ":" + s.hard.SocketDir + ":rw"}
	tmpfs := s.hard.Tmpfs
	if s.set.tmpfs > 0 {
		tmpfs = maps.Clone(tmpfs)
		tmpfs[s.hard.WorkspaceDir] = tmpfsOptions(s.set.tmpfs, s.set.uid, s.set.gid)
	} else {
		workspace := s.workspace + ":" + s.hard.WorkspaceDir + ":rw"
		if s.volume {
			// Not seeded from the image: the engine would copy the
			// owner of the image's workspace directory (root's, made
			// for WorkingDir) onto the volume's root, which the
			// sandbox's user then could not write.
			workspace += ",nocopy"
		}
		binds = append(binds, workspace)
	}
	host := &container.HostConfig{
		AutoRemove:     true,
		Init:           &initProc,
		NetworkMode:    container.NetworkMode(s.set.network),
		Binds:          binds,
		ReadonlyRootfs: s.hard.ReadOnlyRootfs,
		Tmpfs:          tmpfs,
		CapDrop:        s.hard.CapDrop,
		SecurityOpt:    s.hard.SecurityOpt,
		Resources: container.Resources{
			Memory:    s.set.memory,
			NanoCPUs:  s.set.nanoCPUs,
			PidsLimit: &pids,
		},
	}
	if s.set.egress != nil {
		cfg.Cmd = append(cfg.Cmd, s.hard.egressArgs(egress.Injects(s.set.egress))...)
	}
	if s.cache != nil {
		host.Binds = append(host.Binds, s.cache.bind())
		cfg.Env = append(cfg.Env, cacheEnv...)
	}
	return cfg, host
}

// startCodegen creates, attaches to and starts the container. On error
// (ctx's end included) nothing of it is left.
//
// The create is not abandoned when ctx ends: the engine finishes a
// create whose client has gone, and the container would be left
// "Created", with no attach to take it down. It is given until
// cleanupTimeout past ctx's deadline, and a create whose answer is lost
// all the same is removed by its name, unique to this provision.
func startCodegen(ctx context.Context, cli *client.Client, s codegenSpec) (*codegenContainer, error) {
	cfg, host := s.config()
	name := containerName()
	createCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), afterDeadline(ctx, cleanupTimeout))
	created, err := cli.ContainerCreate(createCtx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: host})
	cancel()
	if err != nil {
		if createCtx.Err() != nil {
			removeNamed(cli, name)
		}
		if cerrdefs.IsNotFound(err) {
			return nil, imageMissing(s.set.image)
		}
		return nil, provisionErr(ctx, cli, "create container from image "+s.set.image, err)
	}
	c := &codegenContainer{cli: cli, id: created.ID, output: &bounded.Tail{Max: outputTail}, exited: make(chan struct{}), code: -1}
	ok := false
	defer func() {
		if !ok {
			c.remove(context.WithoutCancel(ctx))
		}
	}()
	if sandbox.Done(ctx) {
		return nil, provisionErr(ctx, cli, "create container", ctx.Err())
	}
	att, err := cli.ContainerAttach(ctx, c.id, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, provisionErr(ctx, cli, "attach to container", err)
	}
	c.att = att.HijackedResponse
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = stdcopy.StdCopy(c.output, c.output, c.att.Reader)
	}()
	// Registered before the start, so an exit cannot be missed.
	wait := cli.ContainerWait(context.Background(), c.id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	go func() {
		select {
		case res := <-wait.Result:
			c.code = res.StatusCode
		case <-wait.Error:
		}
		select {
		case <-copied:
		case <-time.After(outputGrace):
		}
		close(c.exited)
	}()
	if _, err := cli.ContainerStart(ctx, c.id, client.ContainerStartOptions{}); err != nil {
		return nil, provisionErr(ctx, cli, "start container", err)
	}
	ok = true
	return c, nil
}

// Exited is closed once the container has stopped.
func (c *codegenContainer) Exited() <-chan struct{} { return c.exited }

// LastOutput is the end of what sandboxd wrote, on one line, and once
// the container has stopped, its exit status.
func (c *codegenContainer) LastOutput() string {
	out := strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(c.output.Bytes())), "\n", " | ")), " ")
	select {
	case <-c.exited:
		if c.code >= 0 {
			if out == "" {
				out = "(nothing)"
			}
			return out + " (exit code " + strconv.FormatInt(c.code, 10) + ")"
		}
	default:
	}
	return out
}

// dead says how the container stopped, or "" while it runs.
func (c *codegenContainer) dead() string {
	select {
	case <-c.exited:
	default:
		return ""
	}
	out := c.LastOutput()
	if out == "" {
		out = "(nothing)"
	}
	return "stopped; its output ended: " + out
}

// removeNamed force-removes the container called name (or with that
// ID) if it exists, with a context of its own: the call or provision it
// was made for has ended.
func removeNamed(cli *client.Client, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	removeContainer(ctx, cli, name)
}

// kill SIGKILLs the container's processes, so nothing writes to its
// directories any more; the container, AutoRemove, starts going.
func (c *codegenContainer) kill(ctx context.Context) {
	kctx, cancel := context.WithTimeout(ctx, stopBudget)
	defer cancel()
	_, _ = c.cli.ContainerKill(kctx, c.id, client.ContainerKillOptions{Signal: "KILL"})
}

// remove force-removes the container and waits until it is gone (within
// ctx), then drops the attach.
func (c *codegenContainer) remove(ctx context.Context) {
	c.once.Do(func() {
		rctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
		defer cancel()
		removeContainer(rctx, c.cli, c.id)
		if c.att.Conn != nil {
			c.att.Close()
		}
	})
}

// provisionErr classifies an engine failure while provisioning: the
// end of ctx first (a timeout, or the caller gone), then an unreachable
// engine (KindTransport, naming it), and anything else the engine
// refused is KindStart (nothing was handed out).
func provisionErr(ctx context.Context, cli *client.Client, op string, err error) error {
	if sandbox.Done(ctx) {
		return sandbox.ContextError(ctx, CodegenMode+": "+op, 0)
	}
	if isConnErr(err) {
		return unreachable(cli, err)
	}
	return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: %s", CodegenMode, op), err)
}
