package arena_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/AltairaLabs/promptarena/arena/mcpsource"
	"github.com/AltairaLabs/promptarena/arena/statestore"
	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxdimage"
	"github.com/altairalabs/promptkit-sandbox/promptkit"
	"github.com/altairalabs/promptkit-sandbox/promptkit/arena"
)

// The end-to-end tests run four sessions, one per scenario, through
// arena's engine: the mock model writes a Go module with one test into
// the session's sandbox, a passing test in the good sessions and a
// failing one in the bad. Every session's sandbox is its own, so each
// workspace ends up holding its own two files and nothing else.
var e2eSessions = []struct{ name, want string }{
	{"good-a", "4"}, {"good-b", "4"}, {"bad-a", "5"}, {"bad-b", "5"},
}

// e2eConcurrency is how many sessions run at once. PromptKit cuts every
// MCP tool call, the run_tests gate's too, at 30 s, and a sandbox's
// first go test computes vet's facts for the standard library, which the
// image's seeded build cache lacks: on two cores shared with other
// builds it took 12 to 28 s with two sessions at once, 24 to 30 s with
// four, and 25 to 27 s one at a time under a load average of 15
// (measured here).
const e2eConcurrency = 2

// goodSession reports whether the session's test passes.
func goodSession(name string) bool { return strings.HasPrefix(name, "good-") }

// testFile is the name of the session's test file.
func testFile(name string) string { return strings.ReplaceAll(name, "-", "_") + "_test.go" }

// sessionFiles are what the mock model writes in the session: a module
// whose one test asserts 2 + 2 == want.
func sessionFiles(name, want string) map[string]string {
	return map[string]string{
		"go.mod": "module example.com/" + strings.ReplaceAll(name, "-", "_") + "\n\ngo 1.22\n",
		testFile(name): fmt.Sprintf(`package sum

import "testing"

func TestSum(t *testing.T) {
	if got := 2 + 2; got != %s {
		t.Fatalf("2 + 2 = %%d, want %s", got)
	}
}
`, want, want),
	}
}

// failsAsTests is the bad sessions' own assertion: run_tests reports the
// one failing test, so the global gate fails for that reason and no
// other (a timeout, a missing tool, a build failure).
var failsAsTests = map[string]any{
	"type":    "tool_exec",
	"message": "run_tests reports the failing test",
	"params": map[string]any{
		"tool":            "run_tests",
		"args":            map[string]any{"timeout": 120000},
		"timeout_seconds": 120,
		"success_pattern": `test:TestSum[\s\S]*go test exited 1 \(0 passed, 1 failed`,
	},
}

// e2eKit is the kit of the four sessions over source, with sourceArgs;
// the workspace variable, when workspaces is not nil, is each session's
// own directory.
func e2eKit(source string, sourceArgs map[string]any, workspaces map[string]string) kit {
	k := kit{source: source, sourceArgs: sourceArgs}
	for _, s := range e2eSessions {
		sess := session{
			name:       s.name,
			files:      sessionFiles(s.name, s.want),
			assertions: []map[string]any{only("go.mod", testFile(s.name))},
		}
		if !goodSession(s.name) {
			sess.assertions = append(sess.assertions, failsAsTests)
		}
		if ws, ok := workspaces[s.name]; ok {
			sess.variables = map[string]string{"workspace": ws}
		}
		k.scenarios = append(k.scenarios, sess)
	}
	return k
}

// checkE2EResults checks each session's result: no error, and every
// assertion passed except, in the bad sessions, the global one that the
// tests pass (the first: globals come first), which failed on the
// report.
func checkE2EResults(t *testing.T, results map[string]*statestore.RunResult, rec *recorder) {
	t.Helper()
	defer func() {
		if t.Failed() {
			rec.logAnswers(t)
		}
	}()
	for _, s := range e2eSessions {
		r := results[s.name]
		if r == nil {
			t.Errorf("session %s: no result (results: %v)", s.name, slices.Sorted(maps.Keys(results)))
			continue
		}
		if r.Error != "" {
			t.Errorf("session %s failed: %s", s.name, r.Error)
			continue
		}
		got := r.ConversationAssertions.Results
		want := 2
		if !goodSession(s.name) {
			want = 3
		}
		if len(got) != want {
			t.Errorf("session %s: %d assertion results, want %d: %+v", s.name, len(got), want, got)
			continue
		}
		var took []string
		for _, a := range got {
			took = append(took, fmt.Sprintf("%s: passed=%v in %v ms", a.Message, a.Passed, a.Details["duration_ms"]))
		}
		t.Logf("session %s: %s", s.name, strings.Join(took, "; "))
		for i, a := range got {
			if pass := i != 0 || goodSession(s.name); a.Passed != pass {
				t.Errorf("session %s: assertion %d (%s %q) passed=%v, want %v; details %v", s.name, i, a.Type, a.Message, a.Passed, pass, a.Details)
			}
		}
		// The gate failed on what run_tests said, not on a timeout.
		if why, _ := got[0].Details["explanation"].(string); !goodSession(s.name) && !strings.Contains(why, "succeeded but output did not match success_pattern") {
			t.Errorf("session %s: the gate failed with %q, want the report not matching", s.name, why)
		}
	}
}

// recorder wraps a source, recording what each Open handed out and each
// closer's calls. Arena reaches each sandbox through a tap that keeps
// its answers to run_tests, for the log of a failed gate.
type recorder struct {
	src mcpsource.MCPSource

	mu     sync.Mutex
	opened []mcpsource.MCPConn
	taps   []*tap
	closed int
}

func (r *recorder) Open(ctx context.Context, args map[string]any) (mcpsource.MCPConn, io.Closer, error) {
	conn, c, err := r.src.Open(ctx, args)
	if err != nil {
		return conn, c, err
	}
	tp, err := newTap(conn.URL, "run_tests")
	if err != nil {
		return mcpsource.MCPConn{}, nil, errors.Join(err, c.Close())
	}
	r.mu.Lock()
	r.opened = append(r.opened, conn)
	r.taps = append(r.taps, tp)
	r.mu.Unlock()
	tapped := conn
	tapped.URL = tp.url
	return tapped, closerFunc(func() error {
		r.mu.Lock()
		r.closed++
		r.mu.Unlock()
		err := c.Close()
		tp.close()
		return err
	}), nil
}

// logAnswers writes every sandbox's answers to run_tests into t's log.
func (r *recorder) logAnswers(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, tp := range r.taps {
		tp.log(t, r.opened[i].URL)
	}
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// checkOneSandboxPerSession: the source opened n sandboxes, each its own
// instance and endpoint, and arena closed each once.
func (r *recorder) checkOneSandboxPerSession(t *testing.T, n int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	instances, urls := map[string]bool{}, map[string]bool{}
	for _, c := range r.opened {
		instances[c.ContainerID] = true
		urls[c.URL] = true
		if !strings.HasPrefix(c.URL, "http://127.0.0.1:") || !strings.HasPrefix(c.Headers["Authorization"], "Bearer ") {
			t.Errorf("opened %+v; want a loopback URL and a bearer token", c)
		}
	}
	if len(r.opened) != n || len(instances) != n || instances[""] || len(urls) != n || r.closed != n {
		t.Errorf("opened %d sandboxes (%d instances, %d URLs: %+v), closed %d; want %d of each",
			len(r.opened), len(instances), len(urls), r.opened, r.closed, n)
	}
}

// newSource is a source on the test's plugins (named by plugin_dir in
// source_args), logging into the test, registered under a name of its
// own through a recorder; it is closed when the test ends.
func newSource(t *testing.T) (string, *recorder) {
	t.Helper()
	src := arena.New(promptkit.Options{
		Logger: hclog.New(&hclog.LoggerOptions{Name: "promptkit-sandbox", Level: hclog.Warn, Output: testWriter{t}}),
	})
	t.Cleanup(func() {
		if err := src.Close(); err != nil {
			t.Errorf("closing the source: %v", err)
		}
	})
	rec := &recorder{src: src}
	return registerSource(rec), rec
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// repoRoot is the repository's root: this module is promptkit/arena in
// it.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// sandboxdImage makes sure the engine has the Go sandboxd image built
// from this tree (make sandboxd-image), building it if not (minutes,
// the first time), and returns it.
func sandboxdImage(t testing.TB) sandboxdimage.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	img, err := sandboxdimage.Ensure(ctx, sandboxdimage.Options{ModuleDir: repoRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// The plugins, built once per test binary into a directory TestMain
// removes, as make build lays them out.
var plugins struct {
	mu    sync.Mutex
	dir   string
	built map[string]bool
}

// pluginDir returns the directory holding the named plugins (docker,
// kubectl), building those not built yet.
func pluginDir(t testing.TB, names ...string) string {
	t.Helper()
	plugins.mu.Lock()
	defer plugins.mu.Unlock()
	if plugins.dir == "" {
		t.Fatal("pluginDir needs TestMain to make the plugin directory")
	}
	for _, n := range names {
		if !plugins.built[n] {
			plugintest.BuildPlugin(t, plugins.dir, n, "1.0.0")
			plugins.built[n] = true
		}
	}
	return plugins.dir
}

// writeRuntimeConfig writes a RuntimeConfig declaring one sandbox, name,
// with the entry's YAML (indented under it).
func writeRuntimeConfig(t *testing.T, dir, name, entry string) string {
	t.Helper()
	path := filepath.Join(dir, "runtime.yaml")
	body := "apiVersion: promptkit.altairalabs.ai/v1alpha1\nkind: RuntimeConfig\nspec:\n  sandboxes:\n    " + name + ":\n" + entry
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
