package kubecluster

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// TestShared: Shared starts one cluster for the test binary and hands the
// same one to every caller; Main (this package's TestMain) stops it.
func TestShared(t *testing.T) {
	c := Shared(t)
	if again := Shared(t); again != c {
		t.Fatal("a second Shared call started another cluster")
	}
	out, err := exec.CommandContext(context.Background(), c.Kubectl, "--kubeconfig", c.Kubeconfig,
		"version", "-o", "json").CombinedOutput()
	if err != nil || strings.Count(string(out), `"gitVersion": "`+Version+`"`) != 2 {
		t.Errorf("kubectl version: want client and server at %s; got %v:\n%s", Version, err, out)
	}
}
