package direct

import (
	"context"
	"io"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// ModeName is the mode this package serves in spec.sandboxes.
const ModeName = "direct"

// Sandbox runs each request as a local process.
type Sandbox struct {
	name string
	opts shell.Options
}

var (
	_ sandbox.Sandbox  = (*Sandbox)(nil)
	_ sandbox.Streamer = (*Sandbox)(nil)
)

// New returns a direct sandbox called name (ModeName when empty) that runs
// processes with opts; the zero Options give the package defaults.
func New(name string, opts shell.Options) *Sandbox {
	if name == "" {
		name = ModeName
	}
	return &Sandbox{name: name, opts: opts}
}

// Name returns the name the sandbox was created with.
func (s *Sandbox) Name() string { return s.name }

// Spawn runs req on the host and returns its output; see shell.Run for the
// process lifecycle and the errors.
func (s *Sandbox) Spawn(ctx context.Context, req sandbox.Request) (sandbox.Response, error) {
	return s.run(ctx, req, s.opts)
}

// SpawnStreaming is Spawn with the output written to stdout and stderr as
// it arrives (see sandbox.Streamer).
func (s *Sandbox) SpawnStreaming(ctx context.Context, req sandbox.Request, stdout, stderr io.Writer) (sandbox.Response, error) {
	opts := s.opts
	opts.StdoutSink, opts.StderrSink = stdout, stderr
	return s.run(ctx, req, opts)
}

// run is shell.Run in a span of its own, "direct.exec", a child of the
// span ctx carries (a plugin's call, or a hook's), if any.
func (s *Sandbox) run(ctx context.Context, req sandbox.Request, opts shell.Options) (sandbox.Response, error) {
	ctx, span := tracing.StartCall(ctx, ModeName, req.Command)
	resp, err := shell.Run(ctx, req, opts)
	tracing.End(span, err)
	return resp, err
}

// OutputLimit is the number of bytes kept of each of stdout and stderr;
// a plugin host uses it to bound what it accepts back from the backend.
func (s *Sandbox) OutputLimit() int {
	if s.opts.OutputLimit > 0 {
		return s.opts.OutputLimit
	}
	return sandbox.DefaultOutputLimit
}

// Register adds the direct mode to r.
func Register(r *sandbox.Registry) error {
	return r.Register(ModeName, Factory)
}
