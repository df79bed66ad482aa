package kubebox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/altairalabs/promptkit-sandbox/shared/resident"
)

// TestMain silences klog (client-go and the harness's stream code log
// every stream a timeout closes on purpose) and points the resident at a
// static build of the plugin: the test binary itself (built with the race
// detector, so with cgo) cannot run in a container from scratch.
func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "pks-resident-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "promptkit-sandbox-kubectl")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the plugin for the resident: %v\n%s", err, out)
		return 1
	}
	resident.UseExecutable(bin)
	return m.Run()
}
