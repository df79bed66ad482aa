package dockertest

import (
	"strings"
	"testing"
)

// TestSandboxdImage builds the Sandboxd image and runs its sandboxd.
func TestSandboxdImage(t *testing.T) {
	image := Image(t, Sandboxd)
	out := Docker(t, "run", "--rm", "--network", "none", image, "--version")
	if !strings.HasPrefix(out, "sandboxd ") {
		t.Errorf("sandboxd --version: %q", out)
	}
	out = Docker(t, "run", "--rm", "--network", "none", "--entrypoint", "/usr/bin/rg", image, "--version")
	if !strings.Contains(out, "ripgrep") {
		t.Errorf("rg --version: %q", out)
	}
}
