package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// rootWorkspace is a fresh workspace of root's, as a checkout cloned by
// root is, under a parent only root may enter (t.TempDir's): a git
// repository with a root-owned file, and a hard link to a root-only
// file kept outside it. It returns the workspace and that outside file.
func rootWorkspace(t *testing.T) (ws, outside string) {
	t.Helper()
	ws = t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "existing.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	outside = filepath.Join(t.TempDir(), "root-only")
	if err := os.WriteFile(outside, []byte("root-only-canary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(ws, "linked")); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

// TestRunAsDefaultIsUnprivileged: sandboxd as root on a root-owned
// workspace with no --run-as (make run on a fresh machine) runs the
// agent's commands as the unprivileged codegenimage.UID, which can work
// in the workspace — Write, Edit and Bash, git included — but not read
// the token file (0600, in the workspace), a root-only file hard-linked
// into the workspace, or sandboxd's /proc files. The checkout stays
// root's.
func TestRunAsDefaultIsUnprivileged(t *testing.T) {
	proctest.RequireRoot(t)
	ws, outside := rootWorkspace(t)
	// In the workspace: a file root keeps from others stays kept from
	// the agent.
	tokenFile := filepath.Join(ws, "token")
	const token = "default-agent-token-0123456789abcdef0123"
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startHTTP(t, "--workspace", ws, "--token-file", tokenFile)
	s.token = token
	cs := s.connect(t)
	pid := strconv.Itoa(s.cmd.Process.Pid)
	uid := strconv.Itoa(codegenimage.UID)

	if got := callTool(t, cs, "Bash", map[string]any{"command": "id -u; id -g"}); got != uid+"\n"+uid+"\n" {
		t.Errorf("id: %q, want %s twice", got, uid)
	}
	got := callTool(t, cs, "Bash", map[string]any{"command": "cat " + tokenFile + " >/dev/null 2>&1; echo token=$?; " +
		"cat linked >/dev/null 2>&1; echo linked=$?; " +
		"cat /proc/" + pid + "/environ >/dev/null 2>&1; echo environ=$?; " +
		"kill -0 " + pid + " 2>/dev/null; echo kill=$?"})
	if got != "token=1\nlinked=1\nenviron=1\nkill=1\n" {
		t.Errorf("reads beyond the workspace: %q", got)
	}

	callTool(t, cs, "Write", map[string]any{"file_path": "sub/new.txt", "content": "one\n"})
	callTool(t, cs, "Read", map[string]any{"file_path": "existing.txt"})
	callTool(t, cs, "Edit", map[string]any{"file_path": "existing.txt", "old_string": "old", "new_string": "edited"})
	got = callTool(t, cs, "Bash", map[string]any{"command": "echo two >> sub/new.txt && echo bash >> existing.txt && " +
		"mkdir -p made/deep && echo x > made/deep/f && cat sub/new.txt existing.txt made/deep/f && git status --short | sort"})
	want := "one\ntwo\nedited\nbash\nx\n?? existing.txt\n?? linked\n?? made/\n?? sub/\n?? token\n"
	if got != want {
		t.Errorf("Bash after Write and Edit: %q, want %q", got, want)
	}

	for rel, wantUID := range map[string]int{".": 0, "existing.txt": 0, "sub": 0, "sub/new.txt": codegenimage.UID, "made/deep/f": codegenimage.UID} {
		fi, err := os.Stat(filepath.Join(ws, rel))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != wantUID {
			t.Errorf("%s is UID %d's, want %d's", rel, st.Uid, wantUID)
		}
	}
	if n, err := unix.Getxattr(outside, xattrACLAccess, make([]byte, 256)); err == nil {
		t.Errorf("the root-only file linked in got an ACL (%d bytes)", n)
	}
}

// TestRunAsRootExplicitly: --run-as root keeps root, when asked for.
func TestRunAsRootExplicitly(t *testing.T) {
	proctest.RequireRoot(t)
	ws, _ := rootWorkspace(t)
	s := startHTTP(t, "--workspace", ws, "--run-as", "root")
	if got := callTool(t, s.connect(t), "Bash", map[string]any{"command": "id -u"}); got != "0\n" {
		t.Errorf("id -u: %q, want 0", got)
	}
	if _, err := unix.Getxattr(ws, xattrACLAccess, make([]byte, 256)); err == nil {
		t.Error("--run-as root gave the workspace an ACL")
	}
}

// TestRunAsLogsWhy: the start log says which UID the agent's commands
// run as and why.
func TestRunAsLogsWhy(t *testing.T) {
	proctest.RequireRoot(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, "agent commands run as uid " + strconv.Itoa(codegenimage.UID) + " because sandboxd is root, root owns the workspace and no --run-as was given"},
		{"root", []string{"--run-as", "root"}, "agent commands run as uid 0 because --run-as root, asked for explicitly"},
		{"nobody", []string{"--run-as", "65534"}, "agent commands run as uid 65534 because --run-as 65534"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := nobodyWorkspace(t)
			if c.name != "nobody" {
				ws, _ = rootWorkspace(t)
			}
			var stderr bytes.Buffer
			args := append([]string{"--workspace", ws, "--stdio", "--log-format", "json"}, c.args...)
			if err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &bytes.Buffer{}, &stderr); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stderr.String(), `"msg":"`+c.want) {
				t.Errorf("log %s\nwant a line saying %q", stderr.String(), c.want)
			}
		})
	}
}

// TestResolveRunAsNotRoot: a sandboxd that is not root runs the
// commands as itself, and refuses any other user, root included.
func TestResolveRunAsNotRoot(t *testing.T) {
	dirs := []string{t.TempDir()}
	r, err := resolveRunAs("", dirs, 1000)
	if err != nil || r.cred != nil || r.uid != 1000 {
		t.Fatalf("default: %+v, %v; want UID 1000, sandboxd's own", r, err)
	}
	for _, spec := range []string{"root", "0", "65534"} {
		if _, err := resolveRunAs(spec, dirs, 1000); !errors.Is(err, errRunAsNeedsRoot) {
			t.Errorf("--run-as %s: %v, want %v", spec, err, errRunAsNeedsRoot)
		}
	}
}

// TestDefaultAgentRefusesSlash: the workspace / is not given to the
// agent's user; the refusal says what to pass.
func TestDefaultAgentRefusesSlash(t *testing.T) {
	_, err := defaultAgent([]string{"/"})
	if err == nil || !strings.Contains(err.Error(), "give --run-as USER") || !strings.Contains(err.Error(), "--run-as root") {
		t.Fatalf("err = %v", err)
	}
}

// TestWithUser: adding the agent's entry widens the mask by its bits
// only, so a named group a narrower mask limited stays limited; a
// minimal ACL gets a mask of its group bits and the entry's.
func TestWithUser(t *testing.T) {
	minimal := minimalACL(0o640)
	got, changed := withUser(minimal, 65532, 6)
	if !changed || string(encodeACL(got)) != string(encodeACL([]aclEntry{
		{aclUserObj, 6, aclUndefined}, {aclUser, 6, 65532}, {aclGroupObj, 4, aclUndefined}, {aclMask, 6, aclUndefined}, {aclOther, 0, aclUndefined},
	})) {
		t.Errorf("minimal: %+v", got)
	}
	ext := []aclEntry{{aclUserObj, 7, aclUndefined}, {aclGroupObj, 5, aclUndefined}, {aclGroup, 7, 100}, {aclMask, 5, aclUndefined}, {aclOther, 5, aclUndefined}}
	got, _ = withUser(ext, 65532, 2)
	for _, e := range got {
		if e.tag == aclMask && e.perm != 7 {
			t.Errorf("mask %o, want 7 (5 | 2)", e.perm)
		}
	}
	if _, changed := withUser(got, 65532, 2); changed {
		t.Error("granting again changed the ACL")
	}
	back, err := parseACL(encodeACL(got))
	if err != nil || len(back) != len(got) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

// TestRunAsDefaultThroughLink: a workspace named through a symlink, in
// a repository whose root is above it and behind directories only root
// may enter, is reachable and usable by the agent's user: the
// ancestors of the path and of where the link leads get search, and
// git trusts the root-owned repository.
func TestRunAsDefaultThroughLink(t *testing.T) {
	proctest.RequireRoot(t)
	repo := filepath.Join(t.TempDir(), "private", "repo") // under two 0700 directories
	ws := filepath.Join(repo, "sub")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(repo), 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	s := startHTTP(t, "--workspace", link)
	got := callTool(t, s.connect(t), "Bash", map[string]any{"command": "id -u && echo x > f && git status --porcelain --untracked-files=all"})
	if want := strconv.Itoa(codegenimage.UID) + "\n?? sub/f\n"; got != want {
		t.Errorf("Bash: %q, want %q", got, want)
	}
}

// TestRunAsDefaultRefusesWithoutACLs: on a filesystem that cannot hold
// POSIX ACLs (ramfs), sandboxd as root on a root-owned workspace with no
// --run-as refuses to start, as bad input naming what to pass, rather
// than run the agent as root.
func TestRunAsDefaultRefusesWithoutACLs(t *testing.T) {
	proctest.RequireRoot(t)
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("none", ws, "ramfs", 0, "mode=0755"); err != nil {
		t.Skipf("cannot mount a ramfs (%v): no filesystem without ACLs to try", err)
	}
	t.Cleanup(func() { unix.Unmount(ws, unix.MNT_DETACH) })
	err := run(context.Background(), []string{"--workspace", ws, "--stdio"},
		func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
	var bad *usageError
	if !errors.As(err, &bad) {
		t.Fatalf("err = %v, want bad input", err)
	}
	for _, want := range []string{"does not support POSIX ACLs", "give --run-as USER", "--run-as root"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err %q does not say %q", err, want)
		}
	}
}
