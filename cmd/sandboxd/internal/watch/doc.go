// Package watch turns a running process's output into events an agent
// can poll: a line matching one of its error patterns, a period of
// silence, the process's exit.
//
// A Watcher is fed text already scrubbed of secrets, so a pattern cannot
// be used to probe a secret's value and an event never carries one. Each
// stream is split into lines; a line is cut at Options.MaxLine bytes and
// the rest of it, up to its newline, is skipped, so a process printing a
// megabyte without a newline costs MaxLine bytes and the next line is
// matched as usual. A cut line is matched (and its event sent) as soon as
// it reaches the cap, not when its newline finally comes.
//
// Events get increasing IDs starting at 1 and are kept in a ring of
// Options.MaxEvents: a reader asks for the events after the last ID it
// saw and is told how many it missed because the ring moved on.
//
// The idle event fires once per silence: Options.Idle after the last
// output (or after the start, for a process that never prints), and not
// again until the process has printed something and fallen silent for
// Idle once more.
package watch
