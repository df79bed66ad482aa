package diagram_test

import (
	"os"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram/d2render"
)

// TestMain makes the test binary the D2 helper too, as
// cmd/sandboxd/sandboxd-diagram's main does: the tests render D2 in
// children of it.
func TestMain(m *testing.M) {
	d2render.Register()
	child.Serve()
	os.Exit(m.Run())
}
