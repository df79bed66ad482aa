package server

import (
	"os"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram"
)

// TestMain lets the test binary be the D2 renderer render_diagram starts
// (a child of this executable, as it is of sandboxd).
func TestMain(m *testing.M) {
	diagram.ServeChild()
	os.Exit(m.Run())
}
