package plugin

import (
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestLevelFromEnv(t *testing.T) {
	for in, want := range map[string]hclog.Level{
		"": hclog.Info, "debug": hclog.Debug, "TRACE": hclog.Trace, "warn": hclog.Warn,
		"error": hclog.Error, "loud": hclog.Info,
	} {
		if got := levelFromEnv(in); got != want {
			t.Errorf("levelFromEnv(%q) = %v, want %v", in, got, want)
		}
	}
}
