package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
	base := proctest.OpenTempDir(t, "sandboxd-rootread-")
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

// TestSnapshotCreateNeverFollowsASwap: while snapshots are taken, the
// agent's process swaps a directory of the workspace, again and again,
// for a symlink to a root-only directory holding files of the same
// names. No snapshot may hold the canary, and restoring each one must
// not bring it into the workspace.
func TestSnapshotCreateNeverFollowsASwap(t *testing.T) {
	a := newAgentSpace(t)
	if _, err := exec.LookPath("git"); err != nil {
		needTool(t, []string{"PATH=" + os.Getenv("PATH")}, "git", "git")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		needTool(t, []string{"PATH=" + os.Getenv("PATH")}, "python3", "python3")
	}
	const files = 200
	secretDir := filepath.Join(a.base, "rootonly")
	if err := os.Mkdir(secretDir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, marker := a.canary(t, "rootonly/f000", func(m string) string { return m + "\n" })
	own := map[string]string{}
	for i := range files {
		name := fmt.Sprintf("f%03d", i)
		own["d/"+name] = "the agent's own " + name + "\n"
		if err := os.WriteFile(filepath.Join(secretDir, name), []byte(marker+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a.put(t, own)

	// The swap: d and a symlink l to the root-only directory trade
	// places atomically (renameat2 RENAME_EXCHANGE), so d is always
	// there, a directory or the link; as fast as Python can, until the
	// workspace's "stop" file appears.
	racer := exec.Command("/usr/bin/python3", "-c", `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1])
os.symlink(sys.argv[2], "l")
while not os.path.exists("stop"):
    if libc.renameat2(-100, b"d", -100, b"l", 2) != 0:
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
`, a.ws, secretDir)
	racer.SysProcAttr = &syscall.SysProcAttr{Credential: agentUser}
	racer.Stderr = os.Stderr
	if err := racer.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		os.WriteFile(filepath.Join(a.ws, "stop"), nil, 0o644)
		if err := racer.Wait(); err != nil {
			t.Errorf("the racer: %v", err)
		}
		os.Remove(filepath.Join(a.ws, "stop"))
		// d back as the directory, l the link, whichever way they were.
		if fi, err := os.Lstat(filepath.Join(a.ws, "d")); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			unix.Renameat2(unix.AT_FDCWD, filepath.Join(a.ws, "d"), unix.AT_FDCWD, filepath.Join(a.ws, "l"), unix.RENAME_EXCHANGE)
		}
	}
	t.Cleanup(stop)

	store := filepath.Join(a.base, "snapshots")
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: a.ws}}, RunAs: agentUser, SnapshotDir: store})
	cs := d.connect(t, streamable)
	// Under -short fewer snapshots: each is a walk of the workspace and a
	// commit, and each taken one is restored below.
	maxTries, budget := 60, 15*time.Second
	if testing.Short() {
		maxTries, budget = 12, 5*time.Second
	}
	var names []string
	tries := 0
	for start := time.Now(); tries < maxTries && time.Since(start) < budget; tries++ {
		name := fmt.Sprintf("s%d", tries)
		r := call(t, cs, "snapshot_create", map[string]any{"name": name})
		if strings.Contains(r.Text, marker) {
			t.Fatalf("snapshot_create returned the canary: %s", r.Text)
		}
		if !r.IsError {
			names = append(names, name)
		}
	}
	stop()
	t.Logf("%d of %d snapshots taken during the swaps", len(names), tries)

	// What the store holds, every snapshot's every file.
	gitDirs, _ := filepath.Glob(filepath.Join(store, "*", "git"))
	if len(gitDirs) != 1 {
		t.Fatalf("store repositories: %v", gitDirs)
	}
	grep := exec.Command("git", "--git-dir="+gitDirs[0], "grep", "-l", "-F", marker, "--")
	for _, n := range names {
		grep.Args = slices.Insert(grep.Args, len(grep.Args)-1, "refs/snapshots/"+n)
	}
	grep.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := grep.CombinedOutput(); err == nil || len(out) > 0 {
		t.Errorf("the store holds the canary (git grep: %v):\n%.2000s", err, out)
	}
	for _, n := range names {
		r := call(t, cs, "snapshot_restore", map[string]any{"name": n})
		if strings.Contains(r.Text, marker) {
			t.Fatalf("snapshot_restore %s returned the canary: %s", n, r.Text)
		}
		filepath.WalkDir(a.ws, func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() {
				return err
			}
			if b, _ := os.ReadFile(p); strings.Contains(string(b), marker) {
				t.Fatalf("after restoring %s, %s holds the canary", n, p)
			}
			return nil
		})
	}
	// Last, so a leak is reported first: the swaps must not keep most
	// snapshots from being taken.
	if len(names) < tries/2 {
		t.Errorf("only %d of %d snapshots were taken", len(names), tries)
	}
}
