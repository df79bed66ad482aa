// Package warmpool keeps things prepared ahead of the calls that will use
// them: containers created and started for docker_run, exec sessions
// whose wrapper waits for its call for docker_exec and kubectl_exec. A
// call that finds one ready skips the slow half of its start; a call that
// finds none prepares its own, as without a pool, while the pool refills
// in the background.
//
// Each prepared item serves exactly one call. Items are kept per key:
// a docker_run container runs one command from the moment it starts, so
// it serves only calls of that command; an exec session takes its command
// from its call, so every call shares one key.
//
// Held keeps what a prepared item prints before its call claims it, and
// Reaper discards used items off the call's path.
package warmpool
