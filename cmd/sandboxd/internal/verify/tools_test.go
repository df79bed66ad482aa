package verify

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// langEnv is testEnv with cargo and its toolchain reachable: rustup
// installs them under the user's home, which testEnv replaces, and CI
// may run with a PATH that leaves ~/.cargo/bin out.
func langEnv(t *testing.T) []string {
	t.Helper()
	env := testEnv(t, false)
	home, _ := os.UserHomeDir()
	cargoHome := os.Getenv("CARGO_HOME")
	if cargoHome == "" {
		cargoHome = filepath.Join(home, ".cargo")
	}
	rustupHome := os.Getenv("RUSTUP_HOME")
	if rustupHome == "" {
		rustupHome = filepath.Join(home, ".rustup")
	}
	extra := filepath.Join(cargoHome, "bin")
	if p, err := exec.LookPath("cargo"); err == nil {
		extra = filepath.Dir(p) + ":" + extra
	}
	path, _ := strings.CutPrefix(env[0], "PATH=")
	env[0] = "PATH=" + path + ":" + extra
	return append(env, "CARGO_HOME="+cargoHome, "RUSTUP_HOME="+rustupHome, "RUST_BACKTRACE=0")
}

// requireTool skips the test when program is not on env's PATH, unless
// CI is set: there make test has installed it, and its absence is a
// failure.
func requireTool(t *testing.T, env []string, program, pkg string) {
	t.Helper()
	if _, err := shell.LookPath(program, env); err != nil {
		ci.Skipf(t, "%s is not installed (apt-get install %s, or make test-deps)", program, pkg)
	}
}

// copyFixture copies testdata/name into a fresh workspace, so the tools'
// output (Cargo.lock, target/) never lands in the repository.
func copyFixture(t *testing.T, name string) *workspace.Workspace {
	t.Helper()
	src := filepath.Join("testdata", name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}
