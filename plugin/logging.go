package plugin

import (
	"os"

	"github.com/hashicorp/go-hclog"
)

// DefaultLogger is a plugin's logger: JSON lines on stderr, which
// go-plugin on the host parses and forwards to the host's logger at each
// line's own level (plain text would arrive as DEBUG whatever it said),
// at the level the host sets in EnvLogLevel (default info). Serve uses it
// when ServeOpts.Logger is nil; a plugin that hands a logger to its
// factories makes it here, once.
func DefaultLogger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      levelFromEnv(os.Getenv(EnvLogLevel)),
	})
}

// levelFromEnv parses EnvLogLevel; anything unset or unknown is INFO, so a
// typo never turns on TRACE.
func levelFromEnv(v string) hclog.Level {
	if l := hclog.LevelFromString(v); l != hclog.NoLevel {
		return l
	}
	return hclog.Info
}
