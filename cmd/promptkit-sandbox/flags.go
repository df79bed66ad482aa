package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/plugin/host"
)

// commonFlags are accepted by every command.
type commonFlags struct {
	logLevel     string
	pluginDirs   stringList
	startTimeout time.Duration
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
