// Package shells implements sandboxd's Bash, BashOutput and KillShell
// tools as a plain Go API: a Manager runs commands with /bin/bash -c in
// the workspace and keeps the background shells the agent starts.
//
// # Commands
//
// Every command is checked by cmd/sandboxd/internal/guard first, then runs in
// Options.Dir (each call starts there: cd does not persist), in its own
// process group, with stdin at EOF and exactly Options.Env as its
// environment. Entries of Options.Env without "=" are dropped rather than
// looked up in sandboxd's own environment, which may hold the secrets the
// caller removed.
//
// A foreground command runs under a timeout that takes its whole process
// group down; whatever it left running in the background is killed when
// it exits, so a call never leaves processes behind. Its result is stdout,
// then stderr under a "--- stderr ---" label, then "Exit code: N" or
// "Command timed out after D". A non-zero exit is a result, not an error:
// the agent needs the output. Output beyond Options.MaxOutput keeps its
// head and tail and names how many bytes were elided in between; it is
// collected in a bounded buffer, so memory does not depend on how much a
// command prints.
//
// # Background shells
//
// A background shell has no timeout: it runs until it exits, KillShell
// or Close. Its output is read incrementally (each Output call returns
// what arrived since the previous one) from per-stream buffers that hold
// at most Options.MaxBuffered unread bytes; older bytes are dropped, and
// the next read says how many. Output is released a complete line at a
// time (a partial line waits for its end or for the process to exit), so
// a Filter sees whole lines and a secret written in two pieces reaches
// the scrubber whole.
//
// A finished shell stays readable until an Output call has returned its
// final status with all of its output; it is then forgotten, and only a
// tombstone with that status remains, so a repeated call still gets a
// sensible answer. At most Options.MaxBackground finished shells are kept
// unread; beyond that the oldest one's output is discarded and it becomes
// a tombstone too.
//
// # The call budget
//
// With Options.Budget set, a foreground command still running when the
// budget has passed (and whose timeout is longer) is handed over to a
// background shell: the call answers with its output so far, marked
// partial, and the shell's ID, and the process goes on under the timeout
// it was given. Its streams move to the shell's buffers through the same
// scrubber, so nothing is shown twice, nothing is lost and a line cut at
// the handover is scrubbed whole. Such a command runs on a context of
// its own, so the call's end stops it only before the handover. Adopt
// does the same for work that is not a command (sandboxd's test runners):
// a background shell without a process, whose output is the work's
// answer once it ends, and which KillShell stops through a function the
// work gave.
//
// # Watched processes
//
// Watch starts a background shell like any other, with a watch.Watcher
// fed its released (scrubbed) output: it matches lines against error
// patterns and records idle and exit events. Output and Kill work on it
// as on any background shell, and its events outlive its being forgotten
// (for the newest few). At most Options.MaxWatched run at once.
//
// # A call's own environment
//
// Command.Env adds entries (the secrets an agent named) to one command's
// environment; no other command sees them.
//
// # Scrubbing
//
// When Options.Scrubber is set, all output, foreground and background, is
// scrubbed as it arrives, before it is capped, so a cap never cuts a
// secret in two where the scrubber cannot see it whole.
package shells
