package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// needGit fails in CI, where git is installed, and skips elsewhere.
func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err == nil {
		return
	}
	ci.Skip(t, "git is not installed (apt-get install git)")
}

// state is every path under dir (.git's included) with its type, its
// permission bits and its content or link target.
func state(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link:" + target
		case d.IsDir():
			out[rel] = fmt.Sprintf("dir:%v", fi.Mode().Perm())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file:%v:%s", fi.Mode().Perm(), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gitState(t testing.TB, dir string) map[string]string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return nil
	}
	return state(t, filepath.Join(dir, ".git"))
}

func write(t testing.TB, dir, rel, content string, perm fs.FileMode) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

func gitInit(t testing.TB, dir string) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
}

// fixture is a workspace with a repository of its own, ignored files,
// a .gitattributes that would convert line endings, a symlink, an
// executable and a file over a 1000-byte cap.
func fixture(t testing.TB) (ws string, s *Store) {
	t.Helper()
	needGit(t)
	ws = t.TempDir()
	gitInit(t, ws)
	write(t, ws, ".gitignore", "*.log\nbuild/\n", 0o644)
	write(t, ws, ".gitattributes", "* text eol=crlf ident\n", 0o644)
	write(t, ws, "main.go", "package main\r\n// $Id: deadbeef $\r\n", 0o644)
	write(t, ws, "-rf", "a name like a flag\n", 0o644)
	write(t, ws, "odd\nname \xff.txt", "a newline and a byte that is not UTF-8\n", 0o644)
	write(t, ws, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	write(t, ws, "debug.log", "ignored but kept\n", 0o600)
	write(t, ws, "build/out.bin", "\x00\x01binary\r\n", 0o644)
	write(t, ws, "sub/.gitignore", "*\n", 0o644)
	write(t, ws, "sub/deep/x.txt", "nested ignore does not apply\n", 0o644)
	write(t, ws, "big.dat", strings.Repeat("b", 2000), 0o644)
	if err := os.Symlink("main.go", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.TempDir(), ws, Options{MaxFileSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return ws, s
}

func without(m map[string]string, paths ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !slices.Contains(paths, k) && k != ".git" && !strings.HasPrefix(k, ".git/") {
			out[k] = v
		}
	}
	return out
}

func TestCreateDiffRestore(t *testing.T) {
	ws, s := fixture(t)
	ctx := context.Background()
	gitBefore := gitState(t, ws)
	orig := state(t, ws)

	snap, err := s.Create(ctx, "first", "the start\n\nfiles 99\nwith lines")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Files != 11 {
		t.Errorf("Files = %d, want 11", snap.Files)
	}
	if want := []Skipped{{"big.dat", "2000 bytes, over the 1000-byte cap"}}; !slices.Equal(snap.Skipped, want) {
		t.Errorf("Skipped = %v, want %v", snap.Skipped, want)
	}

	// Change it: modify, add, remove, change a mode, swap a file for a
	// symlink, grow the big file.
	write(t, ws, "main.go", "package main\n// changed\n", 0o644)
	write(t, ws, "new/file.txt", "added\n", 0o644)
	write(t, ws, "debug.log", "ignored, changed\n", 0o600)
	write(t, ws, "big.dat", strings.Repeat("c", 3000), 0o644)
	if err := os.Chmod(filepath.Join(ws, "run.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"sub/deep/x.txt", "build/out.bin"} {
		if err := os.Remove(filepath.Join(ws, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(ws, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run.sh", filepath.Join(ws, ".gitignore")); err != nil {
		t.Fatal(err)
	}

	d, err := s.Diff(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range d.Changes {
		got = append(got, c.Kind.String()+" "+c.Path)
	}
	want := []string{"modified .gitignore", "removed build/out.bin", "modified debug.log", "modified main.go", "added new/file.txt", "modified run.sh", "removed sub/deep/x.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("Diff:\n got %q\nwant %q", got, want)
	}

	r, err := s.Restore(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failed) != 0 {
		t.Errorf("Failed = %v", r.Failed)
	}
	if !strings.HasPrefix(r.Before.Name, AutoPrefix+"first-") {
		t.Errorf("Before = %q", r.Before.Name)
	}
	if want := []Skipped{{"big.dat", "3000 bytes, over the 1000-byte cap"}}; !slices.Equal(r.LeftAlone, want) {
		t.Errorf("LeftAlone = %v, want %v", r.LeftAlone, want)
	}
	after := state(t, ws)
	if after["big.dat"] != "file:-rw-r--r--:"+strings.Repeat("c", 3000) {
		t.Errorf("big.dat was touched")
	}
	if g, w := without(after, "big.dat"), without(orig, "big.dat"); !mapsEqual(g, w) {
		t.Errorf("after restore:\n got %v\nwant %v", g, w)
	}
	if !mapsEqual(gitState(t, ws), gitBefore) {
		t.Error("the workspace's .git changed")
	}

	// The automatic snapshot holds the state before the restore.
	d, err = s.Diff(ctx, r.Before.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 7 {
		t.Errorf("diff against %s: %d changes, want 7", r.Before.Name, len(d.Changes))
	}

	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "first" || list[0].Description != "the start\n\nfiles 99\nwith lines" || list[0].Files != 11 || list[1].Name != r.Before.Name || list[1].Files != 10 {
		t.Errorf("List = %+v", list)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestWorkspaceGitUntouched(t *testing.T) {
	ws, s := fixture(t)
	ctx := context.Background()
	// Give the workspace's repository refs, an index and a hook a careless
	// snapshot would disturb or run.
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	write(t, ws, ".git/hooks/pre-commit", "#!/bin/sh\ntouch "+filepath.Join(ws, "HOOK-RAN")+"\n", 0o755)
	before := gitState(t, ws)
	if _, err := s.Create(ctx, "a", ""); err != nil {
		t.Fatal(err)
	}
	write(t, ws, "main.go", "changed\n", 0o644)
	if _, err := s.Restore(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Diff(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	after := gitState(t, ws)
	if !mapsEqual(before, after) {
		for k := range after {
			if before[k] != after[k] {
				t.Errorf(".git/%s changed", k)
			}
		}
		t.Fatal("the workspace's .git changed")
	}
	if _, err := os.Stat(filepath.Join(ws, "HOOK-RAN")); err == nil {
		t.Error("a hook ran")
	}
	// The store is elsewhere, private.
	fi, err := os.Stat(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 || strings.HasPrefix(s.Dir(), ws) {
		t.Errorf("store %s mode %v", s.Dir(), fi.Mode().Perm())
	}
}

func TestNames(t *testing.T) {
	_, s := fixture(t)
	ctx := context.Background()
	for _, name := range []string{"", "../x", "refs/heads/main", "a..b", "x.lock", "x.", "@{1}", "-x", ".x", "a b", "a/b", "HEAD^", "a~1", "a:b", "x\ny", strings.Repeat("n", MaxNameLen+1)} {
		_, err := s.Create(ctx, name, "")
		var ne *NameError
		if !errors.As(err, &ne) {
			t.Errorf("Create(%q) = %v, want a *NameError", name, err)
		}
		if _, err := s.Restore(ctx, name); !errors.As(err, &ne) && len(name) <= MaxNameLen {
			t.Errorf("Restore(%q) = %v, want a *NameError", name, err)
		}
	}
	if _, err := s.Create(ctx, "v1.0_ok-Name", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "v1.0_ok-Name", ""); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate: %v, want ErrExists", err)
	}
	if _, err := s.Restore(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Restore(nope) = %v, want ErrNotFound", err)
	}
	if _, err := s.Diff(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Diff(nope) = %v, want ErrNotFound", err)
	}
	if _, err := s.Create(ctx, "nul", "a\x00b"); err == nil {
		t.Error("a description with a NUL was taken")
	}
}

// A restore never writes through a symlink, nor follows one out of the
// workspace, whatever the agent put in the way.
func TestRestoreDoesNotFollowSymlinks(t *testing.T) {
	ws, s := fixture(t)
	ctx := context.Background()
	outside := t.TempDir()
	write(t, outside, "x.txt", "outside\n", 0o644)
	write(t, outside, "main.go", "outside main\n", 0o644)
	outsideBefore := state(t, outside)
	if _, err := s.Create(ctx, "a", ""); err != nil {
		t.Fatal(err)
	}
	orig := state(t, ws)
	// sub/deep becomes a symlink to the outside directory; main.go a
	// symlink to a file outside.
	if err := os.RemoveAll(filepath.Join(ws, "sub/deep")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "sub/deep")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "main.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "main.go"), filepath.Join(ws, "main.go")); err != nil {
		t.Fatal(err)
	}
	// And run.sh a hard link to a file outside.
	if err := os.Remove(filepath.Join(ws, "run.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(outside, "x.txt"), filepath.Join(ws, "run.sh")); err != nil {
		t.Fatal(err)
	}
	r, err := s.Restore(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failed) != 0 {
		t.Errorf("Failed = %v", r.Failed)
	}
	if !mapsEqual(state(t, outside), outsideBefore) {
		t.Error("the restore changed files outside the workspace")
	}
	if g, w := without(state(t, ws)), without(orig); !mapsEqual(g, w) {
		t.Errorf("after restore:\n got %v\nwant %v", g, w)
	}
}

// A symlink swapped in for a directory between the automatic snapshot
// and the writes is refused, not followed.
func TestTreeRefusesSymlinkedDir(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "d")); err != nil {
		t.Fatal(err)
	}
	tr, err := openTree(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	if err := tr.write("d/f", "100644", []byte("x")); err == nil || !strings.Contains(err.Error(), "symlink or a file") {
		t.Errorf("write through a symlinked dir: %v", err)
	}
	if err := tr.remove("d/f"); err == nil {
		t.Error("remove through a symlinked dir succeeded")
	}
	for _, bad := range []string{"../x", "/etc/passwd", "a//b", ".git/config", "x/.GIT/y", "./x"} {
		if err := tr.write(bad, "100644", []byte("x")); err == nil {
			t.Errorf("write(%q) succeeded", bad)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("outside has %d entries", len(entries))
	}
}

func TestConcurrent(t *testing.T) {
	ws, s := fixture(t)
	ctx := context.Background()
	if _, err := s.Create(ctx, "base", ""); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 8 {
		wg.Go(func() {
			write(t, ws, fmt.Sprintf("f%d.txt", i), "x", 0o644)
			if _, err := s.Create(ctx, fmt.Sprintf("s%d", i), ""); err != nil {
				errs <- err
			}
			if _, err := s.Create(ctx, "same", ""); err != nil && !errors.Is(err, ErrExists) {
				errs <- err
			}
			if i%3 == 0 {
				if _, err := s.Restore(ctx, "base"); err != nil {
					errs <- err
				}
			}
			if _, err := s.Diff(ctx, "base"); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list); n != 1+8+1+3 {
		t.Errorf("%d snapshots, want 13", n)
	}
	if out, err := s.git.run(ctx, nil, "fsck", "--strict"); err != nil {
		t.Errorf("fsck: %v: %s", err, out)
	}
}

func TestOpenRefusesSharedDir(t *testing.T) {
	needGit(t)
	state, ws := t.TempDir(), t.TempDir()
	s, err := Open(state, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(state, ws, Options{}); err == nil || !strings.Contains(err.Error(), "lets others in") {
		t.Errorf("Open on a 0755 state dir: %v", err)
	}
}

// As root with an owner for the workspace, a restore gives what it
// creates that owner, a replaced file keeps its own, and a snapshot
// leaves out what the owner may not read, so a restore cannot hand it to
// the agent.
func TestOwnerAsRoot(t *testing.T) {
	needGit(t)
	proctest.RequireRoot(t)
	const uid, gid = 4321, 4321
	ws := t.TempDir()
	write(t, ws, "kept.txt", "x\n", 0o644)
	write(t, ws, "d/new.txt", "y\n", 0o644)
	write(t, ws, "secret", "root only\n", 0o600)
	write(t, ws, "private/f", "in a root-only directory\n", 0o644)
	if err := os.Chmod(filepath.Join(ws, "private"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".", "kept.txt", "d", "d/new.txt"} {
		if err := os.Lchown(filepath.Join(ws, p), uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(t.TempDir(), ws, Options{Owner: &Owner{uid, gid}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sn, err := s.Create(ctx, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Skipped{{"private", "the agent's user may not read it"}, {"secret", "the agent's user may not read it"}}
	if sn.Files != 2 || !slices.Equal(sn.Skipped, want) {
		t.Errorf("snapshot: %d files, skipped %v; want 2, %v", sn.Files, sn.Skipped, want)
	}
	write(t, ws, "kept.txt", "changed\n", 0o644)
	if err := os.RemoveAll(filepath.Join(ws, "d")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]int{"kept.txt": uid, "d": uid, "d/new.txt": uid, "secret": 0} {
		fi, err := os.Lstat(filepath.Join(ws, p))
		if err != nil {
			t.Fatal(err)
		}
		if got := int(fi.Sys().(*syscall.Stat_t).Uid); got != want {
			t.Errorf("%s: owner %d, want %d", p, got, want)
		}
	}
}

func TestOpenRefusesStoreInWorkspace(t *testing.T) {
	needGit(t)
	ws := t.TempDir()
	if _, err := Open(filepath.Join(ws, "sub", "store"), ws, Options{}); err == nil || !strings.Contains(err.Error(), "inside the workspace") {
		t.Errorf("a store in the workspace: %v", err)
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 0 {
		t.Errorf("Open left %d entries in the workspace", len(entries))
	}
}

// Restoring an automatic snapshot, again and again, makes names that can
// still be restored.
func TestRestoreAutoChain(t *testing.T) {
	_, s := fixture(t)
	ctx := context.Background()
	name := strings.Repeat("n", MaxNameLen)
	if _, err := s.Create(ctx, name, ""); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r, err := s.Restore(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		name = r.Before.Name
	}
	if _, err := s.Diff(ctx, name); err != nil {
		t.Errorf("Diff(%q): %v", name, err)
	}
}

// Nothing of the workspace's repository or of sandboxd's environment
// steers the store's git: not a GIT_DIR, not a config that names an
// fsmonitor or a hooks directory.
func TestGitIsNotSteered(t *testing.T) {
	ws, s := fixture(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	write(t, ws, ".git/config", "[core]\n\tfsmonitor = touch "+marker+"\n\thooksPath = /tmp\n\tworktree = /\n[include]\n\tpath = /etc/passwd\n", 0o644)
	before := gitState(t, ws)
	t.Setenv("GIT_DIR", filepath.Join(ws, ".git"))
	t.Setenv("GIT_WORK_TREE", ws)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(ws, ".git", "index"))
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch "+marker+"'")
	t.Setenv("GIT_OBJECT_DIRECTORY", filepath.Join(ws, ".git", "objects"))
	ctx := context.Background()
	if _, err := s.Create(ctx, "a", ""); err != nil {
		t.Fatal(err)
	}
	write(t, ws, "main.go", "changed\n", 0o644)
	if _, err := s.Diff(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the planted fsmonitor ran")
	}
	if !mapsEqual(gitState(t, ws), before) {
		t.Error("the workspace's .git changed")
	}
}

func TestLongPathSkipped(t *testing.T) {
	_, s := fixture(t)
	// Made a directory at a time, relative to the one above, as a path
	// this long is too long for one system call.
	tr, err := openTree(s.workspace, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	if err := tr.write(strings.Repeat(strings.Repeat("d", 200)+"/", 25)+"f", "100644", []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	sn, err := s.Create(context.Background(), "a", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(sn.Skipped) != 2 || !strings.Contains(sn.Skipped[1].Reason, "file name too long") && !strings.Contains(sn.Skipped[1].Reason, "over 4095") {
		t.Errorf("Skipped = %v", sn.Skipped)
	}
	if sn.Files != 11 {
		t.Errorf("Files = %d, want 11", sn.Files)
	}
}
