package direct

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

func TestMain(m *testing.M) {
	// The direct backend contains its calls as the programs that serve
	// it do: by a cgroup or a supervisor, starts of this binary.
	supervisor.Init()
	code := m.Run()
	if hookDir != "" {
		os.RemoveAll(hookDir)
	}
	os.Exit(code)
}

var (
	hookOnce sync.Once
	hookDir  string
	hookPath string
	hookErr  error
)

// hookBinary builds testdata/hook as a static binary, once per test run,
// into a directory TestMain removes.
func hookBinary(tb testing.TB) string {
	tb.Helper()
	hookOnce.Do(func() {
		hookDir, hookErr = os.MkdirTemp("", "direct-hook-")
		if hookErr != nil {
			return
		}
		hookPath = filepath.Join(hookDir, "hook")
		cmd := exec.Command("go", "build", "-o", hookPath, "./testdata/hook")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			hookErr = fmt.Errorf("build test hook: %v\n%s", err, out)
		}
	})
	if hookErr != nil {
		tb.Fatal(hookErr)
	}
	return hookPath
}
