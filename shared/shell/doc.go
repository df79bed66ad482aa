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
// exits, whichever is first). When the leader exits on its own, whatever
// it left running in its group is SIGKILLed at once, so a call never
// leaves processes behind and never waits for a background child that
// still holds stdout open. The leader is kept unreaped while the group is
// signalled, so its ID cannot be recycled under us and a signal never
// reaches an unrelated group.
//
// The leader also gets SIGKILL if the host process dies (PR_SET_PDEATHSIG);
// its descendants are reached through the group kill or not at all. Linux
// ties that signal to the host thread that forked the child, which is safe
// in a Go program as long as Start is not called from a goroutine that
// locks its OS thread and then exits.
//
// # Limits
//
// A descendant that leaves the group (setsid, setpgid, a daemonizing
// fork) is out of reach: it is not signalled, and it survives the call.
// If it still holds stdout or stderr, Wait stops reading
// Options.OrphanWait after the leader has exited and returns what was
// captured. Only a PID namespace, a cgroup or a container (the other
// backends) contains such processes.
//
// Command is resolved through the host's PATH, not the PATH given in
// Request.Env.
package shell
