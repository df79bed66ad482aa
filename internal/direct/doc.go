// Package direct is the built-in "direct" sandbox: the hook runs on the
// host, as a child of the calling process, with the process control of
// package shell (own process group, whole-group kill on timeout, capped
// output). It needs no plugin and is what a hook without a sandbox uses.
//
// It isolates nothing: the hook has the host user's rights, files and
// network. Use a container or pod backend for untrusted code.
//
// # Configuration
//
// All keys are optional; any other key is rejected.
//
//	timeout       default time limit per call when the request sets none:
//	              a duration string ("2s", "500ms") or integer milliseconds,
//	              > 0 (default 10s)
//	kill_grace    time between SIGTERM and SIGKILL when the limit is hit
//	              (default 500ms; 0 kills at once)
//	output_limit  cap in bytes for stdout and for stderr, each, integer > 0
//	              (default 16 MiB); the excess is dropped and reported
//	clean_env     true: start from an empty environment instead of the
//	              host's; the request's env entries still apply
//	workdir       working directory of the hook (default: the host's); it
//	              must exist when the sandbox is created
package direct
