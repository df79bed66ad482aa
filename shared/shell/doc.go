// Package shell runs a local process the way every sandbox needs it run:
// in its own process group, with a timeout that takes the whole group down,
// stdout and stderr captured separately under a size cap, stdin fed from
// memory, and failures reported as the typed errors of shared/sandbox.
//
// Start launches a process and Wait collects it; Run does both. The same
// core serves the direct backend, the CLI-driven backends (where the
// process is a docker or kubectl client) and sandboxd's Bash tool, whose
// background shells read output incrementally through Process.Stdout and
// Process.Stderr and end with Process.Stop.
//
// # Lifecycle
//
// The process leads a new process group. When the timeout fires, the
// context is done or Stop is called, the group receives SIGTERM, then
// SIGKILL once Options.KillGrace has passed (or as soon as the leader
// exits, whichever is first). The SIGKILL asks nothing of the processes
// it ends: a supervisor is not sent an order then but killed by the host
// with its tree (see Containment), so a command that stops what the host
// waits for (SIGSTOP, a ptrace attach) cannot make a timeout, Stop or the
// context wait on it. When the leader exits on its own, whatever
// it left running in its group is SIGKILLed at once, so a call never
// leaves processes behind and never waits for a background child that
// still holds stdout open. The leader is kept unreaped while the group is
// signalled, so its ID cannot be recycled under us and a signal never
// reaches an unrelated group.
//
// # Containment
//
// A process group does not hold what leaves it (setsid, a daemon's
// double fork), nor does it die with a host that is SIGKILLed. So each
// process is contained as well, the best way the host allows
// (ContainmentEnv overrides the choice):
//
//   - a cgroup v2 of its own (ContainCgroup), where the host can make one
//     under its own cgroup (root, or a delegated subtree, on Linux 5.14
//     or later): signals reach every process in it, SIGKILL through
//     cgroup.kill, and the cgroup is emptied when the leader exits. A
//     keeper process, started once per host, kills and removes the
//     host's cgroups when the host exits, however it exits;
//   - otherwise a supervisor (ContainSupervisor, package supervisor): a
//     second start of the host's own binary that runs the process as its
//     child and, as a child subreaper, finds and kills everything below
//     it, when the leader exits, when told to, and when the host dies.
//     It needs no privilege; it costs that start on every call.
//
// The keeper and the supervisor are starts of the host's own binary,
// which only a program that calls supervisor.Init first thing in main
// allows (see package supervisor). In a program that does not, every
// process is contained by its process group alone (ContainGroup): the
// first call that would have had more logs a warning saying why (log/slog's
// default logger), and a ContainmentEnv that asks for a cgroup or a
// supervisor fails each call instead.
//
// Both catch every way a process can leave its group or its parent. What
// still escapes is what the process has another service start for it
// (systemd-run, a container engine, cron); under a supervisor, also what
// it started before it SIGKILLed the supervisor, which it may, being the
// same user (the host then kills the process group, which is all it can
// still find). Stopping the supervisor instead (SIGSTOP, or holding it
// in ptrace-stop) gains it nothing while the host lives: when the
// SIGKILL is due, the host stops the supervisor, so that it reaps
// nothing and the PIDs found stay theirs, walks /proc for its
// descendants, stopping each as it is found, so that nothing forks past
// the walk, SIGKILLs them, then the supervisor and the process group
// (supervisor.KillTree). SIGKILL ends a stopped or ptrace-stopped
// process like any other. A supervisor stopped when its host is
// SIGKILLed, though, never reads the end of its control pipe: what it
// holds then runs on. Options.Uncontained keeps to the process group
// (ContainGroup): for the docker and kubectl clients the backends drive.
//
// Wait waits for a leader (the command, or its supervisor) the host has
// SIGKILLed for two seconds at most: only a tracer outside the call can
// keep it from exiting, a zombie that tracer alone can see. The call
// then ends as the kill's cause says, and the leader is reaped once the
// tracer lets go.
//
// The leader also gets SIGKILL if the host process dies
// (PR_SET_PDEATHSIG). Linux ties that signal to the host thread that
// forked the child, which is safe in a Go program as long as Start is
// not called from a goroutine that locks its OS thread and then exits.
//
// # Limits
//
// An uncontained descendant that leaves the group is out of reach: it is
// not signalled, and it survives the call. If it still holds stdout or
// stderr, Wait stops reading Options.OrphanWait after the leader has
// exited and returns what was captured.
//
// Command is resolved through the host's PATH, not the PATH given in
// Request.Env.
package shell
