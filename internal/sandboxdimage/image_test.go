package sandboxdimage

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
)

// ensureTimeout bounds making sure of the image: a cold build (mmdebstrap,
// import, docker build) takes minutes; make test builds it up front.
const ensureTimeout = 20 * time.Minute

var (
	ensureOnce sync.Mutex
	ensured    string
)

// image returns the sandboxd image, building it as `make sandboxd-image`
// would (same inputs, same cache) when the engine does not have it.
func image(t *testing.T) string {
	t.Helper()
	dockertest.Require(t)
	ensureOnce.Lock()
	defer ensureOnce.Unlock()
	if ensured != "" {
		return ensured
	}
	ctx, cancel := context.WithTimeout(context.Background(), ensureTimeout)
	defer cancel()
	res, err := Ensure(ctx, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	ensured = res.Ref
	return ensured
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// workspace returns an empty host directory the container's user can
// write, and the profile to run with it. As root it chowns the directory
// to the image's user, as a provider does with a workspace it created;
// otherwise the container runs as the directory's owner, as a provider
// does with a user's own directory.
func workspace(t testing.TB) (string, codegenimage.Run) {
	t.Helper()
	dir := t.TempDir()
	run := codegenimage.DefaultRun(dir, "")
	if os.Getuid() == 0 {
		if err := os.Chown(dir, codegenimage.UID, codegenimage.GID); err != nil {
			t.Fatal(err)
		}
	} else {
		run.User = strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	}
	return dir, run
}

// runDir returns a private directory holding a token file, both owned by
// user (UID:GID), as a provider prepares the one it mounts at
// codegenimage.RunDir.
func runDir(t *testing.T, user, token string) string {
	t.Helper()
	dir := t.TempDir()
	path := dir + "/token"
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	uid, gid, _ := strings.Cut(user, ":")
	u, _ := strconv.Atoi(uid)
	g, _ := strconv.Atoi(gid)
	if os.Getuid() == 0 {
		for _, p := range []string{dir, path} {
			if err := os.Chown(p, u, g); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// probeScript prints one key=value line per property of the container the
// test checks.
const probeScript = `
echo "uid=$(id -u)"
echo "gid=$(id -g)"
for p in /etc /usr/local/bin / /tmp /workspace /run/sandboxd; do
	if touch "$p/probe" 2>/dev/null; then echo "write$p=ok"; else echo "write$p=refused"; fi
done
grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status | tr -d ' \t' | sed 's/:/=/'
echo "net=$(ls /sys/class/net | tr '\n' ' ')"
if (exec 3<>/dev/tcp/1.1.1.1/53) 2>/dev/null; then echo connect=ok; else echo connect=failed; fi
echo "pids=$(cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max)"
echo "token=$(wc -c </run/sandboxd/token)"
echo "home=$HOME"
echo "gocache=$(go env GOCACHE)"
echo "git=$(git --version)"
echo "rg=$(rg --version | head -1)"
echo "go=$(go version)"
echo "bash=$BASH_VERSION"
echo "staticcheck=$(staticcheck -version)"
echo "ctags=$(ctags --version | head -1)"
`

// TestProfile runs the image with the documented profile and checks each
// of its promises from inside.
func TestProfile(t *testing.T) {
	ref := image(t)
	dir, run := workspace(t)
	run.RunDir = runDir(t, run.User, "0123456789abcdef0123456789abcdef\n")
	label := dockertest.UniqueLabel(t)
	args := append([]string{"run", "--rm", "--label", label}, run.Args()...)
	args = append(args, "--entrypoint", "/bin/bash", ref, "-c", probeScript)
	out := dockertest.Docker(t, args...)
	t.Logf("inside:\n%s", out)
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = strings.TrimSpace(v)
		}
	}
	wantUID, wantGID, _ := strings.Cut(run.User, ":")
	want := map[string]string{
		"uid": wantUID, "gid": wantGID,
		"write/etc": "refused", "write/usr/local/bin": "refused", "write/": "refused",
		"write/tmp": "ok", "write/workspace": "ok", "write/run/sandboxd": "ok", "token": "33",
		"CapEff": "0000000000000000", "CapPrm": "0000000000000000", "CapBnd": "0000000000000000",
		"NoNewPrivs": "1",
		"net":        "lo", "connect": "failed",
		"pids":    strconv.Itoa(codegenimage.PidsLimit),
		"home":    "/tmp",
		"gocache": "/tmp/.cache/go-build",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k, prefix := range map[string]string{"git": "git version ", "rg": "ripgrep ", "go": "go version go1.",
		"bash": "5.", "staticcheck": "staticcheck ", "ctags": "Universal Ctags "} {
		if !strings.HasPrefix(got[k], prefix) {
			t.Errorf("%s = %q, want it to start %q", k, got[k], prefix)
		}
	}
	if _, err := os.Stat(dir + "/probe"); err != nil {
		t.Errorf("the container's write to /workspace did not reach the host: %v", err)
	}
	dockertest.AssertNoContainers(t, label)
}

// TestMCPOverStdio drives sandboxd in the container with the official MCP
// client over stdio, as `docker run -i` carries it, and runs a Go module's
// tests and linters inside: the toolchain works on a read-only root with
// its caches in /tmp.
func TestMCPOverStdio(t *testing.T) {
	ref := image(t)
	_, run := workspace(t)
	cs := stdioSandbox(t, ref, run, nil, "warn", testLog{t})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "sandboxd" {
		t.Errorf("server: %+v", info)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash", "run_tests", "run_lint", "run_typecheck"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}

	for name, content := range map[string]string{
		"go.mod":       "module example.com/tiny\n\ngo 1.24\n",
		"tiny.go":      "package tiny\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"tiny_test.go": "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"2+2\")\n\t}\n}\n",
	} {
		mcptest.CallText(t, cs, "Write", map[string]any{"file_path": name, "content": content})
	}
	if got := mcptest.CallText(t, cs, "Grep", map[string]any{"pattern": "func Add"}); !strings.Contains(got, "tiny.go") {
		t.Errorf("Grep: %q", got)
	}
	if got := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "id -u; git init -q && git status --short | wc -l"}); !strings.Contains(got, strings.Split(run.User, ":")[0]) {
		t.Errorf("Bash: %q", got)
	}
	if got := mcptest.CallText(t, cs, "run_tests", map[string]any{}); !strings.Contains(got, "1 passed, 0 failed") {
		t.Errorf("run_tests: %q", got)
	}
	if got := mcptest.CallText(t, cs, "run_lint", map[string]any{}); !strings.Contains(got, "no findings") || strings.Contains(got, "not installed") {
		t.Errorf("run_lint (go vet and staticcheck, both installed): %q", got)
	}
}
