package dockerbox

import (
	"context"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// A runner is one way of running docker_run containers: the Engine API
// (apiRunner) or the docker CLI (cliRunner). A call is split in two so a
// warm pool can do the slow half ahead of demand: prepare creates and
// starts a container whose process waits for its stdin; finish hands it
// the call.
type runner interface {
	// check runs when the sandbox opens: the engine answers and the
	// image is present locally.
	check(ctx context.Context) error
	// prepare creates and starts a container running spec, attached,
	// its stdin open and nothing written to it yet. What the process
	// writes before finish is kept for the call. Errors are classified
	// (sandbox.Error kinds, ContextError for ctx).
	prepare(ctx context.Context, spec runSpec) (prepared, error)
	// close releases the runner's resources.
	close() error
}

// prepared is a started container waiting for its one call.
type prepared interface {
	// finish writes stdin and closes it, copies the output to out, and
	// waits for the process to exit. It returns the exit code, or an
	// error classified as Spawn's are (ctx is the call's). It does not
	// remove the container: discard does.
	finish(ctx context.Context, stdin []byte, out shell.Outputs) (code int, err error)
	// Discard kills and removes the container and releases everything
	// the prepared call holds. It is safe to call more than once.
	Discard()
}

// runSpec is what a container is made for: everything of a Request but
// its stdin and timeout.
type runSpec struct {
	command string
	args    []string
	env     []string // resolved KEY=value entries
	what    string   // `command "x"`, for errors
	timeout time.Duration
}

// key identifies the specs a pooled container can serve.
func (s runSpec) key() string {
	var b strings.Builder
	for _, part := range [][]string{{s.command}, s.args, s.env} {
		for _, v := range part {
			b.WriteString(v)
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	return b.String()
}
