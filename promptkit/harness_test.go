package promptkit_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	pklogger "github.com/AltairaLabs/PromptKit/runtime/logger"
	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	"k8s.io/klog/v2"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/kubetest"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// The plugins are built once per test binary, into a directory TestMain
// removes, exactly as make build lays them out.
var plugins struct {
	once sync.Once
	dir  string
	err  string
}

var buildRoot string

func TestMain(m *testing.M) {
	// Direct hooks are contained by starts of this binary.
	promptkit.Init()
	klog.SetLogger(logr.Discard())
	// PromptKit logs every conversation at info.
	pklogger.SetLogger(slog.New(slog.DiscardHandler))
	dir, err := os.MkdirTemp("", "promptkit-adapter-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildRoot = dir
	// The cluster a Kubernetes test starts is stopped when the tests end.
	code := kubecluster.Main(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// pluginDir returns the directory holding the docker and kubectl plugins,
// building them on first use (skipped under -short, as every build is).
func pluginDir(t testing.TB) string {
	t.Helper()
	plugins.once.Do(func() {
		d := filepath.Join(buildRoot, "plugins")
		if err := os.Mkdir(d, 0o755); err != nil {
			plugins.err = err.Error()
			return
		}
		bt := &onceT{TB: t}
		plugintest.BuildPlugin(bt, d, "docker", "1.0.0")
		plugintest.BuildPlugin(bt, d, "kubectl", "1.0.0")
		plugins.dir, plugins.err = d, bt.failure
	})
	if plugins.err != "" {
		t.Fatal(plugins.err)
	}
	return plugins.dir
}

// onceT lets a build shared by every test report its failure to each of
// them instead of only the first.
type onceT struct {
	testing.TB
	failure string
}

func (o *onceT) Fatal(args ...any) { o.failure = fmt.Sprint(args...); o.TB.Fatal(args...) }
func (o *onceT) Fatalf(format string, args ...any) {
	o.failure = fmt.Sprintf(format, args...)
	o.TB.Fatalf(format, args...)
}

// hostVerdict is the verdict test hook built for this host, for direct
// sandboxes.
func hostVerdict(t testing.TB) string {
	t.Helper()
	out := filepath.Join(buildRoot, "verdict")
	if _, err := os.Stat(out); err == nil {
		return out
	}
	plugintest.GoBuild(t, out, "github.com/altairalabs/promptkit-sandbox/internal/dockertest/hooks/verdict", "")
	return out
}

// newAdapter opens an adapter on the test plugins with its base directory
// at base, closed when the test ends.
func newAdapter(t testing.TB, base string, env map[string]string) *promptkit.Adapter {
	t.Helper()
	a, err := promptkit.New(promptkit.Options{
		PluginDirs:    []string{pluginDir(t)},
		BaseDir:       base,
		ReplaceDirect: true,
		Logger:        hclog.New(&hclog.LoggerOptions{Name: "adapter", Level: hclog.Warn, Output: testWriter{t}}),
		LookupEnv: func(k string) (string, bool) {
			if v, ok := env[k]; ok {
				return v, true
			}
			return os.LookupEnv(k)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("close adapter: %v", err)
		}
	})
	return a
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// backend is one sandbox the cases run through, as a RuntimeConfig entry,
// with where its hook is and where the hook's log lands.
type backend struct {
	name    string // the sandbox's name in spec.sandboxes
	entry   string // its YAML, indented for spec.sandboxes
	hook    string // the verdict hook's path where it runs
	logEnv  string // VERDICT_LOG as the hook sees it
	logHost string // the same file, from here
}

// sidecar starts a long-lived container from the hooks image with dir
// mounted at /out, removed when the test ends.
func sidecar(t testing.TB, dir string) string {
	t.Helper()
	image := dockertest.Image(t, dockertest.Hooks)
	return strings.TrimSpace(dockertest.Docker(t, "run", "-d", "--init", "--network", "none",
		"--label", dockertest.UniqueLabel(t), "-v", dir+":/out", image, "sleep", "600"))
}

// backends returns the four sandboxes of the suite: direct, docker_run
// with a warm pool, docker_exec and kubectl_exec (against the loopback
// API server, its pod the docker_exec container). base is the adapter's
// base directory (the kubeconfig is written there and named relatively);
// env receives POD_NAME.
func backends(t testing.TB, base string, env map[string]string) []backend {
	t.Helper()
	dockertest.Require(t)
	out := t.TempDir()
	if err := os.Chmod(out, 0o777); err != nil {
		t.Fatal(err)
	}
	id := sidecar(t, out)
	srv := kubetest.Start(t)
	srv.AddPod("promptkit", "agent-0", map[string]string{"app": "agent"}, map[string]string{"hooks": id})
	if err := os.Rename(srv.Kubeconfig(t, base, "promptkit"), filepath.Join(base, "kubeconfig")); err != nil {
		t.Fatal(err)
	}
	env["POD_NAME"] = "agent-0"
	image := dockertest.Image(t, dockertest.Hooks)
	return []backend{
		{
			name: "local", entry: "mode: direct\n",
			hook: hostVerdict(t), logEnv: filepath.Join(out, "direct.log"), logHost: filepath.Join(out, "direct.log"),
		},
		{
			name:  "fresh",
			entry: fmt.Sprintf("mode: docker_run\nimage: %s\npool: 1\nmounts: [%q]\n", image, out+":/out"),
			hook:  "/hooks/verdict", logEnv: "/out/docker_run.log", logHost: filepath.Join(out, "docker_run.log"),
		},
		{
			name:  "sidecar",
			entry: fmt.Sprintf("mode: docker_exec\ncontainer: %s\n", id),
			hook:  "/hooks/verdict", logEnv: "/out/docker_exec.log", logHost: filepath.Join(out, "docker_exec.log"),
		},
		{
			name:  "pod",
			entry: "mode: kubectl_exec\npod: ${POD_NAME}\ncontainer: hooks\nkubeconfig: ./kubeconfig\n",
			hook:  "/hooks/verdict", logEnv: "/out/kubectl_exec.log", logHost: filepath.Join(out, "kubectl_exec.log"),
		},
	}
}

// registeredBackends sets up the four backends and an adapter whose
// modes are registered with PromptKit's process-wide registry, which is
// where PromptKit's loaders look.
func registeredBackends(t testing.TB) (base string, bs []backend, a *promptkit.Adapter) {
	t.Helper()
	base = t.TempDir()
	env := map[string]string{}
	bs = backends(t, base, env)
	a = newAdapter(t, base, env)
	if err := a.Register(nil); err != nil {
		t.Fatal(err)
	}
	return base, bs, a
}

// indent indents every line of s by n spaces.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func writeFile(t testing.TB, path, body string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
