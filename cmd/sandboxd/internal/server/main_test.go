package server

import (
	"os"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
)

// TestMain lets the test binary be the children render_diagram and the
// structural Go edits start (children of this executable, as they are
// of sandboxd).
func TestMain(m *testing.M) {
	child.Serve()
	os.Exit(m.Run())
}
