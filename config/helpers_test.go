package config

import (
	"context"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

type nopSandbox struct{ name string }

func (s nopSandbox) Name() string { return s.name }
func (s nopSandbox) Spawn(context.Context, sandbox.Request) (sandbox.Response, error) {
	return sandbox.Response{}, nil
}

// testEnv is the environment every test sees instead of the process's.
var testEnv = map[string]string{
	"POD_NAME":  "hooks-0",
	"NAMESPACE": "agents",
	"EMPTY":     "",
}

func testOptions(t testing.TB) Options {
	t.Helper()
	reg := sandbox.NewRegistry()
	for _, mode := range []string{"docker_run", "kubectl_exec"} {
		err := reg.Register(mode, func(_ context.Context, name string, _ map[string]any) (sandbox.Sandbox, error) {
			return nopSandbox{name}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return Options{Modes: reg, LookupEnv: func(k string) (string, bool) {
		v, ok := testEnv[k]
		return v, ok
	}}
}
