package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
)

// commonFlags are accepted by every command.
type commonFlags struct {
	logLevel     string
	pluginDirs   stringList
	startTimeout time.Duration
	// telemetry is not a flag: the command sets it before it opens the
	// runtime, which reports to it.
	telemetry telemetry
}

func newFlagSet(name string, stderr io.Writer, common *commonFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&common.logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
	fs.Var(&common.pluginDirs, "plugin-dir", "directory to search for plugins (repeatable); replaces the default search path")
	fs.DurationVar(&common.startTimeout, "plugin-start-timeout", host.DefaultStartTimeout, "how long a plugin may take to start and complete its handshake")
	return fs
}

// parseFlags parses args and reports whether the command should go on; on
// false, code is the exit code (0 for -h, 2 for a bad flag).
func parseFlags(fs *flag.FlagSet, args []string) (ok bool, code int) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, exitOK
		}
		return false, exitUsage
	}
	return true, exitOK
}

func (c *commonFlags) logger(w io.Writer) (hclog.Logger, error) {
	level := hclog.LevelFromString(c.logLevel)
	if level == hclog.NoLevel {
		return nil, fmt.Errorf("invalid --log-level %q (want trace, debug, info, warn or error)", c.logLevel)
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:   "promptkit-sandbox",
		Level:  level,
		Output: w,
	}), nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// DefaultMaxInput is how much a command reads of its input (a hook's
// payload, spawn's stdin) unless --max-input says otherwise: far more than
// a conversation with images needs, far less than a runaway pipe.
const DefaultMaxInput = 64 << 20

// sizeFlag is a size in bytes, written as Docker writes one ("64m").
type sizeFlag int64

func (s *sizeFlag) String() string { return bounded.Size(int64(*s)) }
func (s *sizeFlag) Set(v string) error {
	n, err := bounded.ParseSize(v)
	if err != nil {
		return err
	}
	if n <= 0 {
		return fmt.Errorf("size %q: want more than nothing", v)
	}
	*s = sizeFlag(n)
	return nil
}

// maxInputFlag adds --max-input to fs.
func maxInputFlag(fs *flag.FlagSet) *sizeFlag {
	limit := sizeFlag(DefaultMaxInput)
	fs.Var(&limit, "max-input", "read at most this much input (e.g. 64m, 1g); more is an error")
	return &limit
}

// maxInputHint tells a user whose input was too large what to do.
const maxInputHint = "raise the limit with --max-input"
