package remoteproc

import (
	"context"
	"fmt"
	"io"
)

// Target is one place calls run (a container, a container of a pod), as a
// transport reaches it: the Engine API, client-go, or a docker or kubectl
// binary. It is all a backend writes; the Engine does the rest.
type Target interface {
	fmt.Stringer // where, for messages: "container hooks", "pod p (namespace n, container c)"

	// Exec runs argv in the target with the three streams attached (a
	// nil stdin attaches none) and returns the remote process's exit
	// code. An error means the code is unknown: the exec was refused,
	// the connection failed, or ctx ended. When ctx ends the transport
	// drops the connection and returns; the remote process may live on
	// (an exec stream cannot signal it), which is why the Engine kills
	// by PID first.
	Exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (exit int, err error)

	// Explain says why an exec failed or a session ended before its
	// command ran, asking the target's owner (the engine, the API
	// server) when it can: the container is gone, the pod stopped, the
	// server is unreachable. err is the exec's error, msg what the
	// client or runtime said besides the command's streams. It returns
	// a *sandbox.Error, or nil when it finds nothing wrong and has
	// nothing to say (the Engine then says what it saw).
	Explain(ctx context.Context, err error, msg string) error
}

// ClientFailure is implemented by targets reached through a client binary
// whose exit status mixes its own failures with the command's (docker
// exec, kubectl exec): it recognises the client's own failure in what the
// client printed, and returns nil when msg is not one.
type ClientFailure interface {
	ClientFailure(msg string) error
}
