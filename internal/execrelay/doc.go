// Package execrelay is how `promptkit-sandbox exec` runs its call through
// a serve: the client, and the wire both ends speak.
//
// exec is a hook command: PromptKit starts it once per hook call, so its
// start is paid on every call. Through a serve, exec has nothing to do
// but pass its arguments, environment and stdin to the serve and the
// serve's answer back, so the client is written to need nothing the Go
// runtime has not started already: it takes the process over from this
// package's initialiser (Go runs, of the packages whose imports are
// initialised, the first by import path, and this one imports only what
// os does, and os/signal), before the CLI's initialisers run; when no
// serve takes the call, it leaves the process to main, which runs it
// cold (see Attempt). internal/layers holds the package to its imports
// (initFirst).
//
// The serve decides everything else: it parses exec's flags, as exec
// would, checks that it serves exec's config, runs the command in the
// sandbox it lends, and sends exec's output, messages and exit status.
// One exec's call is one connection:
//
//	exec  → serve: Magic, then a Request frame
//	serve → exec:  Stderr frames and Exit (refused: bad flags, another
//	               config), or Accept
//	exec  → serve: Stdin frames, then StdinEnd; Cancel on SIGINT or SIGTERM
//	serve → exec:  Stdout and Stderr frames as the command writes them, a
//	               Heartbeat every HeartbeatInterval, Exit last
//
// A frame is its type (one byte), the length of its payload (four bytes,
// big-endian) and the payload. The serve tells its relay connections
// from its gRPC ones (the plugin protocol, codegen's commands) by the
// first four bytes.
package execrelay
