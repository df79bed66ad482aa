// Package sandboxtest is the contract of package sandbox as tests: one
// suite, Conformance, that every backend runs against its own sandboxes,
// in process and through its plugin binary, so that what the contract
// promises is proven the same way for each.
//
// A backend's test describes its configurations as Cells — how to open
// one, how long its target takes to start, how to find what a call left
// behind — and hands them to Conformance, which runs every case of the
// contract against each: stdin, stdout and stderr byte for byte; exit
// codes, 125 to 127 included, apart from a command that cannot start;
// the environment inside the target; a timeout and a cancellation that
// leave no process (nor container) behind; concurrent calls; the output
// cap; the typed errors; the backend's own diagnostics kept out of the
// hook's streams; and Close.
//
// The suite looks for leftovers by a marker argument, through the host's
// /proc (HostProcs): processes in local containers, and so in the pods of
// the loopback cluster of package kubetest, show there too.
package sandboxtest
