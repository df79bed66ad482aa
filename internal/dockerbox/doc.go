// Package dockerbox is the Docker backend of promptkit-sandbox, served by
// the promptkit-sandbox-docker plugin. By default it talks to the Docker
// Engine API (github.com/moby/moby/client) directly: DOCKER_HOST and the
// other DOCKER_* variables are honoured as by the docker CLI, and the API
// version is negotiated down to the engine's (1.41 for docker.io 20.10).
//
// # transport: cli
//
// With transport: cli the sandbox runs the docker binary (docker_path,
// found on PATH by default) as the reference backends do — docker run -i
// and docker exec -i, extra_args inserted before the image or container —
// with the same settings, labels, defaults and guarantees as the API
// transport. Environment values are never put on the CLI's command line:
// "-e KEY" takes each from the CLI process's environment, and variables
// the CLI reads itself (DOCKER_*, PATH, HOME, proxies...) go through a
// private env file instead. docker run is given --pull never and a
// container name, and no --rm: when it exits 125, 126 or 127 the
// container is inspected, and only if the engine made and started it is
// the code the hook's; otherwise the CLI's words are a start error and
// never reach the hook's output. For that reason docker_run's stderr is
// passed on when the call ends, not as it comes (stdout streams). A
// timeout removes the container (docker rm -f) before the CLI is killed;
// docker_exec kills the call's processes inside the container, as with
// the API.
//
// # docker_run: a fresh container per call
//
// Each Spawn creates a container from the image, attaches to it before it
// starts, starts it, writes Request.Stdin and closes it, splits the output
// into stdout and stderr and waits for the exit. The container is removed
// right after the call returns, off its path (Close waits for those
// removals); on a timeout or a cancellation it is killed and removed
// before Spawn returns.
//
// Its keys, their defaults and meanings are in docs/docker.md, once; the
// list Describe reports (RunKeys) comes from the config struct.
//
// With network "none" the API transport sets NetworkDisabled in the
// container's config: runc makes the container a fresh network namespace
// with only loopback (what "none" means), and the engine skips its
// libnetwork sandbox and setkey hook, a large part of a cold start.
//
// A missing image is a start error naming it, at open and at each call.
// A command the image lacks (or cannot execute) makes the engine refuse to
// start the container: that is a start error (sandbox.ErrStart) carrying
// the engine's words, never an *sandbox.ExitError 127 or 126, so a hook's
// own exit status 125, 126 or 127 is always its own. On a timeout or a
// cancellation the container is killed and removed before Spawn returns.
//
// # The warm pool
//
// With pool: N the sandbox keeps up to N containers created, attached and
// started ahead of demand, so the container start (most of a call's time)
// is off the call's path. Each is handed to exactly one call and removed
// afterwards (in the background; Close waits for it), so a call still
// gets a container no other call has touched. A container runs one
// command from the moment it starts, so the pool is kept per command
// (command, arguments and environment) for the 8 most recently used: the
// first call of a command starts its own container, as without a pool,
// and the pool fills for the next ones. A warm container's process is
// already running, waiting for its stdin; what it writes before the call
// is the call's output. A call that finds no ready container starts one of
// its own; a failed refill is retried with backoff, its error left for the
// next call that starts its own container to report. On a timeout or a
// cancellation the container is killed and removed before Spawn returns,
// as without a pool. Close removes every warm container.
//
// # docker_exec: a command inside a running container
//
// Its keys are in docs/docker.md (ExecKeys comes from the config struct).
// The sandbox is a transport of internal/remoteproc's engine, which runs
// every call the same way for docker_exec and kubectl_exec: the sandbox
// gives it an exec in the container (an exec session of the Engine API,
// or `docker exec -i` of the CLI, as the sandbox's user and in its
// workdir) and says why one failed (the container is gone, stopped or
// paused; the engine unreachable).
//
// # The resident
//
// With transport api and resident on (the default), the sandbox copies
// the plugin's own executable into the container when it opens, at
// /.promptkit-sandbox/resident-HASH (owned by root, mode 0755; the name
// holds 16 hex digits of a hash of its Go build ID and size, so it is
// copied once per container and plugin build), and starts it there as
// one long-lived exec, as the sandbox's user and in its workdir. Every
// call then goes to that process over the exec's stdin and stdout
// (package resident): it forks and execs the command in a process group
// of its own, so a call costs a fork and exec in the container instead of
// an exec session, whose runtime start is tens of milliseconds of runc.
// On a timeout or a cancellation the resident kills the call's process
// tree. The resident is non-dumpable, so a call running as the same user
// cannot open its descriptors through /proc or trace it. Closing the
// sandbox ends the resident's stdin: it kills whatever still runs and
// exits. If the resident dies (the container restarted), the next call
// starts another.
//
// The resident needs a writable root filesystem for the copy, an image of
// the plugin's architecture and a static plugin binary (make build builds
// it with CGO_ENABLED=0). When it cannot start, the plugin logs why at
// WARN and every call is an exec session of its own, with warm sessions;
// resident: false chooses that path outright.
//
// # Without a resident: the wrapper
//
// Each call runs under remoteproc's /bin/sh wrapper, which reports its
// PID, takes the command, arguments and environment from stdin (never
// from the exec request), checks that the command exists, runs it and
// reports its exit status; the engine strips those lines, so the hook
// sees exactly its own arguments, stdin and environment. A wrapper takes
// its whole call from stdin, so the sandbox keeps up to warm sessions
// (default 2) started ahead of demand that serve any call, each exactly
// once. A missing command is a start error; an exec the engine cannot
// start (a missing workdir or user) is a start error with the engine's
// words, which never reach the hook's stdout or stderr.
//
// On a timeout or a cancellation, or when the command has exited but
// something it left behind still holds its output past
// remoteproc.OrphanGrace, a second exec freezes and SIGKILLs the call's
// processes (the wrapper's session, and every descendant found by parent
// PID) before the call returns: closing the exec's connection alone would
// leave them running. The container therefore needs /bin/sh (with the
// kill builtin) and /proc, which the sandbox checks when it opens. A
// process that starts a session of its own and whose parent has exited
// is not found.
//
// # Labels and stale containers
//
// Containers carry org.promptkit.sandbox.plugin=docker,
// org.promptkit.sandbox.name=SANDBOX, org.promptkit.sandbox.pid=PID and
// org.promptkit.sandbox.host=HOSTNAME. When the plugin starts it removes
// the labelled containers of this host whose plugin process no longer
// exists (RemoveStale).
//
// # Errors
//
// A timeout is sandbox.ErrTimeout (and context.DeadlineExceeded) saying
// "timed out after X"; a cancellation is context.Canceled; a non-zero exit
// is *sandbox.ExitError with the container's or exec's exit code; an
// engine that cannot be reached is sandbox.ErrTransport naming the
// endpoint ("docker engine at unix:///var/run/docker.sock is unreachable").
package dockerbox
