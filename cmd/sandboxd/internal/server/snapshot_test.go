package server

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// snapshotWorkspace is testdata/snapshot in a fresh directory, with a
// repository of its own (one commit) that ignores cache/ and *.log.
func snapshotWorkspace(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		ci.Skip(t, "git is not installed (apt-get install git)")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/snapshot")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("cache/\n*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	return dir
}

// tree is every file and symlink under dir with its content or target,
// .git's included.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		out[rel] = fmt.Sprintf("%v %s", fi.Mode(), b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s is %q, want %q", what, k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s should not exist", what, k)
		}
	}
}

var autoName = regexp.MustCompile(`auto-before-restore-base-\d{8}T\d{6}\.\d{9}Z`)

func TestSnapshotTools(t *testing.T) {
	dir := snapshotWorkspace(t)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, SnapshotMaxFileSize: 1000})
	cs := d.connect(t, streamable)
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), []byte(strings.Repeat("x", 1001)), 0o644); err != nil {
		t.Fatal(err)
	}
	orig := tree(t, dir)

	if got := ok(t, cs, "snapshot_list", nil); got != "No snapshots yet; take one with snapshot_create." {
		t.Errorf("empty list: %q", got)
	}
	got := ok(t, cs, "snapshot_create", map[string]any{"name": "base", "description": "before the refactor"})
	if want := "Created snapshot \"base\": 6 files.\nSkipped (not in the snapshot; a restore leaves them alone), 1:\n  big.bin: 1001 bytes, over the 1000-byte cap\n"; got != want {
		t.Errorf("create:\n got %q\nwant %q", got, want)
	}
	if got := fails(t, cs, "snapshot_create", map[string]any{"name": "base"}); !strings.Contains(got, `snapshot "base": a snapshot with this name already exists`) {
		t.Errorf("duplicate: %q", got)
	}

	// The agent's changes: edit, add, delete, gitignored ones too.
	ok(t, cs, "Bash", map[string]any{"command": "echo changed >> src/app.go && echo new > src/new.go && rm README.md cache/out.txt && echo more >> debug.log"})
	got = ok(t, cs, "snapshot_diff", map[string]any{"name": "base"})
	want := "The workspace against snapshot \"base\": 1 added, 2 modified, 2 removed.\nremoved README.md\nremoved cache/out.txt\nmodified debug.log\nmodified src/app.go\nadded src/new.go\n" +
		"Not compared (no snapshot holds them), 1:\n  big.bin: 1001 bytes, over the 1000-byte cap\n"
	if got != want {
		t.Errorf("diff:\n got %q\nwant %q", got, want)
	}

	got = ok(t, cs, "snapshot_restore", map[string]any{"name": "base"})
	auto := autoName.FindString(got)
	want = fmt.Sprintf("Saved the workspace as it was in snapshot %q: restore that to undo.\nRestored snapshot \"base\": 2 restored, 2 reverted, 1 deleted.\nrestored README.md\nrestored cache/out.txt\nreverted debug.log\nreverted src/app.go\ndeleted src/new.go\n"+
		"Left alone (no snapshot holds them), 1:\n  big.bin: 1001 bytes, over the 1000-byte cap\n", auto)
	if auto == "" || got != want {
		t.Errorf("restore:\n got %q\nwant %q", got, want)
	}
	sameTree(t, "after restore", tree(t, dir), orig)
	if got := ok(t, cs, "snapshot_diff", map[string]any{"name": "base"}); !strings.HasPrefix(got, "The workspace matches snapshot \"base\".\n") {
		t.Errorf("diff after restore: %q", got)
	}

	list := ok(t, cs, "snapshot_list", nil)
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 3 || lines[0] != "2 snapshots, oldest first:" ||
		!regexp.MustCompile(`^base  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  6 files  before the refactor$`).MatchString(lines[1]) ||
		!strings.HasPrefix(lines[2], auto+"  ") || !strings.HasSuffix(lines[2], "  5 files  automatic snapshot before restoring base") {
		t.Errorf("list:\n%s", list)
	}
	// The restore is undone by restoring the automatic snapshot.
	ok(t, cs, "snapshot_restore", map[string]any{"name": auto})
	if b, err := os.ReadFile(filepath.Join(dir, "src/new.go")); err != nil || string(b) != "new\n" {
		t.Errorf("src/new.go after undoing the restore: %q, %v", b, err)
	}
}

// The workspace's own repository is the agent's: snapshots neither read
// nor write it, and keep nothing in the workspace.
func TestSnapshotLeavesGitAlone(t *testing.T) {
	dir := snapshotWorkspace(t)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}})
	cs := d.connect(t, streamable)
	gitDir := filepath.Join(dir, ".git")
	before := tree(t, gitDir)
	ok(t, cs, "snapshot_create", map[string]any{"name": "a"})
	ok(t, cs, "Bash", map[string]any{"command": "echo x > src/app.go; rm -r src/util; touch added"})
	ok(t, cs, "snapshot_diff", map[string]any{"name": "a"})
	ok(t, cs, "snapshot_restore", map[string]any{"name": "a"})
	sameTree(t, ".git", tree(t, gitDir), before)
	if out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--ignored").CombinedOutput(); err != nil || string(out) != "!! cache/\n!! debug.log\n" {
		t.Errorf("git status after a restore: %q, %v", out, err)
	}
	// The store is none of the workspace's business: Bash cannot find it
	// there.
	if got := ok(t, cs, "Bash", map[string]any{"command": "find . -path ./.git -prune -o -print | sort"}); strings.Contains(got, "snapshot") || strings.Contains(got, "index") {
		t.Errorf("the workspace holds store files:\n%s", got)
	}
}

func TestSnapshotRefusesBadNames(t *testing.T) {
	dir := snapshotWorkspace(t)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}})
	cs := d.connect(t, streamable)
	for _, name := range []string{"../../heads/main", "refs/heads/main", "--upload-pack=touch x", "-b", "HEAD@{1}", "a..b", "x.lock", "a b", "a\nb", ".hidden", "", strings.Repeat("a", 200)} {
		for _, tool := range []string{"snapshot_create", "snapshot_diff", "snapshot_restore"} {
			if got := fails(t, cs, tool, map[string]any{"name": name}); !strings.Contains(got, "snapshot name") {
				t.Errorf("%s(%q): %q", tool, name, got)
			}
		}
	}
	if got := fails(t, cs, "snapshot_restore", map[string]any{"name": "missing"}); got != `snapshot "missing": no snapshot has this name` {
		t.Errorf("restore missing: %q", got)
	}
	if got := ok(t, cs, "snapshot_list", nil); !strings.HasPrefix(got, "No snapshots yet") {
		t.Errorf("a refused name made a snapshot: %q", got)
	}
}

// A restore puts files back where they were, not where symlinks the
// agent planted since lead.
func TestSnapshotRestoreIgnoresPlantedSymlinks(t *testing.T) {
	dir := snapshotWorkspace(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "util.go"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}})
	cs := d.connect(t, streamable)
	orig := tree(t, dir)
	ok(t, cs, "snapshot_create", map[string]any{"name": "a"})
	ok(t, cs, "Bash", map[string]any{"command": fmt.Sprintf("rm -r src/util && ln -s %s src/util && rm README.md && ln -s %s/util.go README.md", outside, outside)})
	got := ok(t, cs, "snapshot_restore", map[string]any{"name": "a"})
	if strings.Contains(got, "Could not") {
		t.Errorf("restore: %s", got)
	}
	sameTree(t, "outside", tree(t, outside), map[string]string{"util.go": "-rw-r--r-- outside\n"})
	sameTree(t, "workspace", tree(t, dir), orig)
}

func TestSnapshotDiffIsCapped(t *testing.T) {
	dir := snapshotWorkspace(t)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}})
	cs := d.connect(t, streamable)
	ok(t, cs, "snapshot_create", map[string]any{"name": "a"})
	ok(t, cs, "Bash", map[string]any{"command": "mkdir many && cd many && for i in $(seq 1000 1499); do echo $i > f$i; done"})
	got := ok(t, cs, "snapshot_diff", map[string]any{"name": "a"})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != maxSnapshotLines+1 || lines[0] != `The workspace against snapshot "a": 500 added, 0 modified, 0 removed.` ||
		lines[1] != "added many/f1000" || lines[len(lines)-1] != "... truncated: 301 more not shown (at most 200 lines or 32768 bytes)" {
		t.Errorf("diff of 500 files: %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

// Two sessions snapshotting and restoring at once leave a store with
// every snapshot they made.
func TestSnapshotConcurrentSessions(t *testing.T) {
	dir := snapshotWorkspace(t)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}})
	var sessions []*mcp.ClientSession
	for range 3 {
		sessions = append(sessions, d.connect(t, streamable))
	}
	ok(t, sessions[0], "snapshot_create", map[string]any{"name": "base"})
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i, cs := range sessions {
		wg.Go(func() {
			for j := range 3 {
				name := fmt.Sprintf("s%d-%d", i, j)
				if r, err := tryCall(cs, "snapshot_create", map[string]any{"name": name}); err != nil || r.IsError {
					errs <- fmt.Sprintf("%s: %v %s", name, err, r.Text)
				}
			}
			if r, err := tryCall(cs, "snapshot_restore", map[string]any{"name": "base"}); err != nil || r.IsError {
				errs <- fmt.Sprintf("restore: %v %s", err, r.Text)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	list := ok(t, sessions[0], "snapshot_list", nil)
	if !strings.HasPrefix(list, "13 snapshots, oldest first:\n") {
		t.Errorf("list:\n%s", list)
	}
}

// Each workspace has snapshots of its own; a read-only server offers
// none of the tools.
func TestSnapshotWorkspacesAndReadOnly(t *testing.T) {
	a, b := snapshotWorkspace(t), snapshotWorkspace(t)
	d := startDaemon(t, Config{Workspaces: []Workspace{{Name: "a", Dir: a}, {Name: "b", Dir: b}}})
	cs := d.connect(t, streamable)
	ok(t, cs, "snapshot_create", map[string]any{"workspace": "a", "name": "x"})
	if got := ok(t, cs, "snapshot_list", map[string]any{"workspace": "b"}); !strings.HasPrefix(got, "No snapshots yet") {
		t.Errorf("b's list: %q", got)
	}
	if got := fails(t, cs, "snapshot_restore", map[string]any{"workspace": "b", "name": "x"}); got != `snapshot "x": no snapshot has this name` {
		t.Errorf("restore of a's snapshot in b: %q", got)
	}
	if got := fails(t, cs, "snapshot_list", nil); !strings.Contains(got, "say which with the workspace argument") {
		t.Errorf("no workspace: %q", got)
	}

	ro := startDaemon(t, Config{Workspaces: []Workspace{{Dir: snapshotWorkspace(t)}}, ReadOnly: true})
	rcs := ro.connect(t, streamable)
	tools, err := rcs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if strings.HasPrefix(tool.Name, "snapshot_") {
			t.Errorf("a read-only server offers %s", tool.Name)
		}
	}
}

func TestSnapshotDirInsideWorkspaceRefused(t *testing.T) {
	ws := t.TempDir()
	_, err := New(Config{Workspaces: []Workspace{{Dir: ws}}, Token: testToken, SnapshotDir: filepath.Join(ws, "snaps")})
	if err == nil || !strings.Contains(err.Error(), "is inside the workspace") {
		t.Fatalf("New with the snapshot directory in the workspace: %v", err)
	}
}
