package plugin

import (
	"os"

	"github.com/hashicorp/go-hclog"
)

// defaultLogger writes JSON lines to stderr, which go-plugin on the host
// parses and forwards to the host's logger at each line's own level.
// Plain text would arrive as DEBUG whatever it said.
func defaultLogger() hclog.Logger {
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
