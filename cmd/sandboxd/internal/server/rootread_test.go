package server

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// The tests here are the attacks of issue 28 on what sandboxd reads for
// the agent: sandboxd is root and runs the agent's code as UID 65534
// (RunAs); that code swaps a file or directory sandboxd is about to read
// for a link to a root-only canary outside the workspace. The canary's
// content must never come back.

var agentUser = &syscall.Credential{Uid: 65534, Gid: 65534}

// agentSpace is a workspace owned by the agent's user, and a directory
// beside it (root's, readable by all) for what the agent must not read.
type agentSpace struct {
	ws, base string
}

func newAgentSpace(t *testing.T) agentSpace {
	t.Helper()
	proctest.RequireRoot(t)
	// Not t.TempDir: its parent is root's alone (0700).
	base, err := os.MkdirTemp("", "sandboxd-rootread-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	a := agentSpace{ws: filepath.Join(base, "ws"), base: base}
	a.agentDir(t, a.ws)
	return a
}

// agentDir makes dir, the agent's.
func (a agentSpace) agentDir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	return dir
}

// put writes files into the workspace, the agent's.
func (a agentSpace) put(t *testing.T, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(a.ws, rel)
		for d := filepath.Dir(p); d != a.ws; d = filepath.Dir(d) {
			a.agentDir(t, d)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
}

// canary writes a root-only file (0600) beside the workspace whose
// content is made from a fresh marker, and returns its path and the
// marker.
func (a agentSpace) canary(t *testing.T, name string, content func(marker string) string) (string, string) {
	t.Helper()
	b := make([]byte, 12)
	rand.Read(b)
	marker := "CANARY-" + hex.EncodeToString(b)
	p := filepath.Join(a.base, name)
	if err := os.WriteFile(p, []byte(content(marker)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, marker
}

// env is diagEnv with a home and a Go build cache of the agent's own.
// The cache is kept between runs, as a build cache is: a fresh one costs
// a minute and more of compiling the standard library.
func (a agentSpace) env(t *testing.T) []string {
	t.Helper()
	home := a.agentDir(t, filepath.Join(a.base, "home"))
	cache := a.agentDir(t, filepath.Join(os.TempDir(), "sandboxd-test-gocache-65534"))
	env := diagEnv(t, "")
	for i, kv := range env {
		switch {
		case strings.HasPrefix(kv, "HOME="):
			env[i] = "HOME=" + home
		case strings.HasPrefix(kv, "GOCACHE="):
			env[i] = "GOCACHE=" + cache
		}
	}
	return append(env, "TMPDIR="+a.agentDir(t, filepath.Join(a.base, "tmp")))
}

// TestTestsCoveringKeepsItsProfile: the package's TestMain, once m.Run
// has written the cover profile, replaces it with a symlink (or a hard
// link, or a rename over it) to a root-only one-line file; the answer
// must not quote that file, and the coverage is the test's own.
func TestTestsCoveringKeepsItsProfile(t *testing.T) {
	a := newAgentSpace(t)
	canary, marker := a.canary(t, "shadow", func(m string) string { return m + ":$6$x:19000:0:99999:7:::\n" })
	a.put(t, map[string]string{
		"go.mod":  "module example.com/swap\n\ngo 1.22\n",
		"calc.go": "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
		"calc_test.go": `package calc

import (
	"flag"
	"os"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add")
	}
}

// TestMain swaps the profile m.Run wrote for a link to the canary, every
// way it can.
func TestMain(m *testing.M) {
	code := m.Run()
	profile := flag.Lookup("test.coverprofile").Value.String()
	os.Remove(profile)
	os.Symlink(` + "`" + canary + "`" + `, profile)
	os.Link(` + "`" + canary + "`" + `, profile)
	os.Symlink(` + "`" + canary + "`" + `, profile+".new")
	os.Rename(profile+".new", profile)
	os.Exit(code)
}
`,
	})
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: a.ws}}, RunAs: agentUser, Env: a.env(t)})
	cs := d.connect(t, streamable)
	r := call(t, cs, "tests_covering", map[string]any{"file_path": "calc.go", "line": 4})
	if strings.Contains(r.Text, marker) {
		t.Fatalf("tests_covering returned the root-only canary:\n%s", r.Text)
	}
	if r.IsError || firstLine(r.Text) != "calc.go:4 is run by 1 of the package's 1 test: TestAdd" {
		t.Errorf("tests_covering:\n%s\nwant calc.go:4 run by TestAdd", r.Text)
	}
}

// TestRunTestsKeepsItsJUnitReport: a conftest.py, once pytest has written
// its JUnit report, replaces it with a link to a root-only report whose
// failure names the canary; the findings are pytest's own.
func TestRunTestsKeepsItsJUnitReport(t *testing.T) {
	a := newAgentSpace(t)
	env := a.env(t)
	canary, marker := a.canary(t, "secret.xml", func(m string) string {
		return `<?xml version="1.0"?><testsuite name="s"><testcase classname="rootonly" name="test_rootonly" file="rootonly.py" line="1">` +
			`<failure message="` + m + `">` + m + `</failure></testcase></testsuite>` + "\n"
	})
	a.put(t, map[string]string{
		"pytest.ini":  "[pytest]\n",
		"test_mod.py": "def test_fails():\n    assert 1 == 2, 'own failure'\n",
		"conftest.py": `import os

CANARY = ` + "'" + canary + "'" + `


def pytest_unconfigure(config):
    report = config.option.xmlpath
    for swap in (lambda: os.remove(report), lambda: os.symlink(CANARY, report),
                 lambda: os.link(CANARY, report),
                 lambda: (os.symlink(CANARY, report + '.new'), os.rename(report + '.new', report))):
        try:
            swap()
        except OSError:
            pass
`,
	})
	needTool(t, env, "python3", "python3-pytest")
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: a.ws}}, RunAs: agentUser, Env: env})
	cs := d.connect(t, streamable)
	r := call(t, cs, "run_tests", map[string]any{})
	// The scrubber may redact the marker: the test's name gives it away.
	if strings.Contains(r.Text, marker) || strings.Contains(r.Text, "test_rootonly") {
		t.Fatalf("run_tests returned the root-only canary:\n%s", r.Text)
	}
	if !strings.Contains(r.Text, "test_mod.py:2:") || !strings.Contains(r.Text, "own failure") {
		t.Errorf("run_tests:\n%s\nwant test_mod.py's own failure only", r.Text)
	}
}
