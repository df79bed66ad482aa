package direct

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// config mirrors the keys documented in the package comment; pointers tell
// an absent key (or one left empty in YAML, "timeout:") from an explicit
// zero.
type config struct {
	Timeout     *sandbox.Duration `json:"timeout"`
	KillGrace   *sandbox.Duration `json:"kill_grace"`
	OutputLimit *int              `json:"output_limit"`
	CleanEnv    bool              `json:"clean_env"`
	Workdir     string            `json:"workdir"`
}

// Factory builds a direct sandbox from a spec.sandboxes entry; it is the
// sandbox.Factory registered for ModeName. It only reads its
// configuration, so it does not wait on ctx.
func Factory(_ context.Context, name string, cfg map[string]any) (sandbox.Sandbox, error) {
	opts, err := parseConfig(cfg)
	if err != nil {
		return nil, err
	}
	return New(name, opts), nil
}

func parseConfig(cfg map[string]any) (shell.Options, error) {
	var c config
	var opts shell.Options
	if err := sandbox.DecodeConfig(cfg, &c); err != nil {
		return opts, err
	}
	limits, err := sandbox.ParseLimits(c.Timeout, c.OutputLimit)
	if err != nil {
		return opts, err
	}
	// Absent keys stay zero: shell's own defaults, the same values.
	if c.Timeout != nil {
		opts.Timeout = limits.Timeout
	}
	if c.OutputLimit != nil {
		opts.OutputLimit = limits.OutputLimit
	}
	if c.KillGrace != nil {
		d := time.Duration(*c.KillGrace)
		// shell reads zero as "default"; here zero means what it says.
		opts.KillGrace = d
		if d == 0 {
			opts.KillGrace = -1
		}
	}
	opts.CleanEnv = c.CleanEnv
	if c.Workdir != "" {
		fi, err := os.Stat(c.Workdir)
		if err != nil {
			return opts, fmt.Errorf("config: key %q: %w", "workdir", err)
		}
		if !fi.IsDir() {
			return opts, fmt.Errorf("config: key %q: %s is not a directory", "workdir", c.Workdir)
		}
		opts.Dir = c.Workdir
	}
	return opts, nil
}
