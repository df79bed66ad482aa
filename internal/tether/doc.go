// Package tether ties a docker_run container to the plugin that started
// it, so that the container ends when the plugin dies however it dies —
// SIGKILL, a crash, the OOM killer, its host's process group killed —
// and whenever it is scheduled: nothing of the plugin has to run.
//
// The plugin's own static executable is bind-mounted into the container
// and is its command (Flag, then the hook's command line), run by the
// engine's init (docker-init): the init's one child, whose exit ends the
// container. (Without an init the hook would be PID 1, which nothing in
// the container can kill: such containers go without a tether.) The tether
// writes Hello to stderr, starts the hook with a pipe for stdin and the
// container's stdout and stderr, and copies one frame from its own stdin
// to the hook's: Header(n), then n bytes. Its stdin is the plugin's
// attach connection, held open for as long as the call runs. When the
// plugin process ends, the kernel closes that connection, the engine
// closes the container's stdin (the container is StdinOnce), and the
// tether sees the hang-up: it kills the hook and exits, which ends the
// container (the engine removes it: AutoRemove). Otherwise it exits as
// the hook does, with its exit status (128 + the signal when a signal
// ended it), and passes the signals a container is sent on to the hook.
//
// Hello tells the plugin the tether ran: a container whose stderr does not
// start with it never ran the hook (the engine's init could not execute
// the tether), and the plugin runs the call again without one. A command
// the tether cannot execute is reported as the engine's init reports it:
// a line on stderr (see FailurePrefix) and exit status 127 or 126.
package tether
