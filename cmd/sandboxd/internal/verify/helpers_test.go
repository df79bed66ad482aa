package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// goEnvOnce reads the go command's settings once: the build cache must be
// the shared one, or every fixture would compile the standard library.
var goEnvOnce = sync.OnceValues(func() (map[string]string, error) {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT").Output()
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 {
		return nil, os.ErrInvalid
	}
	return map[string]string{"GOCACHE": lines[0], "GOMODCACHE": lines[1], "GOPATH": lines[2], "GOROOT": lines[3]}, nil
})

// testEnv is a command environment with the go toolchain and, when
// withStaticcheck is set and it is installed, staticcheck on PATH. The
// module proxy is off: fixtures have no dependencies and tests need no
// network.
func testEnv(t *testing.T, withStaticcheck bool) []string {
	t.Helper()
	goenv, err := goEnvOnce()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	path := filepath.Join(goenv["GOROOT"], "bin") + ":/usr/local/bin:/usr/bin:/bin"
	if withStaticcheck {
		path = filepath.Join(goenv["GOPATH"], "bin") + ":" + path
	}
	return []string{
		"PATH=" + path,
		"HOME=" + t.TempDir(),
		// The go command's telemetry counters go to the real config
		// directory: written under the temporary HOME, a late write raced
		// its removal ("directory not empty").
		"XDG_CONFIG_HOME=" + userConfigDir(),
		"GOCACHE=" + goenv["GOCACHE"],
		"GOMODCACHE=" + goenv["GOMODCACHE"],
		"GOPATH=" + goenv["GOPATH"],
		"GOFLAGS=-mod=mod",
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"LANG=C",
	}
}

// skipInShort skips the test under -short (make unit), saying why: the
// tests that compile and run a fixture's tests, or run staticcheck, take
// seconds of CPU each; make test runs them.
func skipInShort(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipping in -short mode: %s (make test runs it)", why)
	}
}

// staticcheckInstalled says whether testEnv(t, true) finds staticcheck.
func staticcheckInstalled(t *testing.T) bool {
	_, err := shell.LookPath("staticcheck", testEnv(t, true))
	return err == nil
}

// fixture writes files (path → content) into a fresh workspace and
// opens it.
func fixture(t *testing.T, files map[string]string) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

const goMod = "module example.com/fixture\n\ngo 1.22\n"

func verifier(t *testing.T, ws *workspace.Workspace, withStaticcheck bool) *Verifier {
	return New(ws, Options{Env: testEnv(t, withStaticcheck)})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// rendered is each finding as the agent sees it.
func rendered(r *Report) []string {
	out := make([]string, len(r.Findings))
	for i, f := range r.Findings {
		out[i] = f.String()
	}
	return out
}

func userConfigDir() string {
	if d, err := os.UserConfigDir(); err == nil {
		return d
	}
	return os.TempDir()
}
