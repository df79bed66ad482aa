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
// the API. One difference: with the CLI, a leftover background process
// that keeps a docker_exec call's output open is only killed when the
// call times out.
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
//	key           default               meaning
//	image         (required)            an image present in the local engine; never pulled
//	network       none                  network mode (none, bridge, host, a network name)
//	mounts        []                    "-v" specs SRC:DST[:ro|rw]; SRC an absolute host path or a volume name
//	env           []                    KEY=value set verbatim, or bare KEY forwarded from the plugin's environment
//	user          the image's           user[:group] in the container
//	workdir       the image's           absolute working directory in the container
//	memory        no limit              e.g. "256m", "1g" (binary units), or bytes
//	cpus          no limit              e.g. "0.5", 2
//	pids_limit    256                   processes in the container; -1 for no limit
//	read_only     false                 read-only root filesystem
//	cap_drop      [ALL]                 capabilities dropped
//	cap_add       []                    capabilities added back
//	security_opt  [no-new-privileges]   engine security options
//	timeout       10s                   for calls that set none
//	output_limit  16777216              bytes kept of each of stdout and stderr
//	transport     api                   api (the Engine API) or cli (the docker binary; see below)
//	pool          0                     warm containers per command, 0 to 64 (see below)
//	extra_args    []                    docker CLI arguments: needs transport cli
//	docker_path   docker                the docker CLI, for transport cli
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
//	key           default       meaning
//	container     (required)    name or ID of a running container
//	workdir       the container's
//	user          the container's
//	env           []            as for docker_run
//	resident      true          run calls through a resident (transport api; see below)
//	warm          2             warm execs kept per command without a resident, 0 to 64
//	timeout, output_limit, transport, extra_args, docker_path: as for docker_run
//
// # The resident
//
// With transport api and resident on (the default), the sandbox copies
// the plugin's own executable into the container when it opens, at
// /.promptkit-sandbox/resident-HASH (owned by root, mode 0755; the name
// holds 16 hex digits of a hash of its Go build ID and size, so it is
// copied once per container and plugin build), and starts it there as one long-lived
// exec, as the sandbox's user and in its workdir. Every call then goes to
// that process over the exec's stdin and stdout (package resident): it
// forks and execs the command in a process group of its own, with the
// call's stdin, environment (over the exec's own, as an exec session's
// is) and output caps, so a call costs a fork and exec in the container
// instead of an exec session, whose runtime start is tens of milliseconds
// of runc. Calls run concurrently through it. On a timeout or a
// cancellation the resident freezes and kills the call's process group
// and every descendant it finds by parent PID; when the command exits,
// what is left of its group is killed. The resident is non-dumpable, so a
// call running as the same user cannot open its descriptors through /proc
// or trace it. Closing the sandbox ends the resident's stdin: it kills
// whatever still runs and exits. If the resident dies (the container
// restarted), the next call starts another.
//
// The resident needs a writable root filesystem for the copy, an image of
// the plugin's architecture and a static plugin binary (make build builds
// it with CGO_ENABLED=0). When it cannot start, the plugin logs why at
// WARN and every call is an exec session of its own, with warm execs, as
// described next; resident: false chooses that path outright, for
// containers where nothing may be written.
//
// The command runs as /bin/sh -c WRAPPER COMMAND ARGS...: the wrapper
// checks that the command exists, reports its PID on the first line of
// stderr (which the sandbox strips) and replaces itself with the command,
// so the hook sees exactly its own arguments, stdin and environment. A
// missing command is a start error; a container that does not exist, is
// stopped or is paused is a start error that says which; so is an exec the
// engine cannot start (a missing workdir or user), with the engine's
// message — which never reaches the hook's stdout or stderr.
//
// Without a resident, starting an exec costs the engine tens of
// milliseconds (a runc exec per call), so the sandbox keeps up to warm execs per command (command,
// arguments and environment; the 8 most recently used) started ahead of
// demand: each is a wrapper that has checked the command and reported its
// PID, and waits on its first stdin line. A call hands one its stdin
// (after that line) and it replaces itself with the command, so the
// command starts when the call does; each serves exactly one call, and a
// new one is started once the call is done. A warm exec whose container
// stopped or restarted is dropped unused. Closing a warm exec's stdin (on
// Close) ends it without running anything. With warm: 0 each call starts
// its own exec.
//
// The engine starts an exec'd process as the leader of a session of its
// own, so the call's processes are that session (plus any descendant that
// started another). On a timeout or a cancellation a second exec freezes
// them all (SIGSTOP, found through /proc by session and by parent PID
// until no new one appears) and SIGKILLs them before the call returns:
// closing the exec's connection alone would leave the process running.
// The same happens when the command exits but something it left behind
// keeps its output open (checked every 250ms while a call runs), as the
// direct backend kills what is left of a process group. The container
// therefore needs /bin/sh (with the kill builtin) and /proc, which the
// sandbox checks when it opens. A process that starts a session of its own
// and whose parent has exited is not found.
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
