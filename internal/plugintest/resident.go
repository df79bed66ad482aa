package plugintest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/resident"
)

// RunWithResident runs a backend package's tests with the resident taken
// from a static build of the plugin in pluginPkg: the test binary itself
// (built with the race detector, so with cgo) cannot run in a container
// from scratch. It returns TestMain's exit code.
//
// Under go test -short (make unit) it builds nothing: every test that
// starts a resident needs a container, and those skip under -short.
func RunWithResident(m *testing.M, pluginPkg string) int {
	if !flag.Parsed() {
		flag.Parse() // testing.Short needs the flags; m.Run parses them anyway
	}
	if testing.Short() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "pks-resident-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "plugin")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pluginPkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the plugin for the resident: %v\n%s", err, out)
		return 1
	}
	resident.UseExecutable(bin)
	return m.Run()
}

// Running returns the resident k keeps, failing t when the sandbox keeps
// none or none runs.
func Running[K comparable, S resident.Session](t testing.TB, k *resident.Keeper[K, S]) S {
	t.Helper()
	if k == nil {
		t.Fatal("the sandbox keeps no resident")
	}
	sess, ok := k.Current()
	if !ok {
		t.Fatalf("no resident runs (start error: %v)", k.Err())
	}
	return sess
}

// FailedToStart checks that k's first start failed for a reason that
// mentions want, leaving no resident behind.
func FailedToStart[K comparable, S resident.Session](t testing.TB, k *resident.Keeper[K, S], want string) {
	t.Helper()
	if k == nil || k.Err() == nil {
		t.Fatal("a resident runs")
	}
	if _, ok := k.Current(); ok {
		t.Fatal("a failed start left a resident behind")
	}
	if !strings.Contains(k.Err().Error(), want) {
		t.Errorf("start error = %v, want it to mention %q", k.Err(), want)
	}
}
