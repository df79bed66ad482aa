package server

import (
	"os"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram/d2render"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// TestMain lets the test binary be the children render_diagram and the
// structural Go edits start (children of this executable, as they are
// of sandboxd).
func TestMain(m *testing.M) {
	// Bash and the tools contain their commands by starts of this
	// binary, as sandboxd's main does.
	supervisor.Init()
	// D2 renders in a helper binary of its own; here the test binary is
	// that helper too.
	d2render.Register()
	child.Serve()
	diagramHelper = func() string {
		self, err := os.Executable()
		if err != nil {
			panic(err)
		}
		return self
	}
	os.Exit(m.Run())
}
