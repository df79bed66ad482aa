package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// nobodyWorkspace is a fresh workspace owned by UID and GID 65534, on a
// path that user can reach.
func nobodyWorkspace(t *testing.T) string {
	t.Helper()
	base := proctest.OpenTempDir(t, "sandboxd-runas-")
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestRunAsWorkspaceOwner: sandboxd as root runs the agent's commands as
// the workspace's owner by default. They cannot kill sandboxd, read its
// /proc files or the token file; the workspace stays theirs both ways
// (what Write makes they can change, what they make Edit can change).
func TestRunAsWorkspaceOwner(t *testing.T) {
	proctest.RequireRoot(t)
	ws := nobodyWorkspace(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	const token = "run-as-token-0123456789abcdef0123456789"
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startHTTPEnv(t, []string{"MY_SECRET=run-as-secret-value-0123456789"}, "--workspace", ws, "--token-file", tokenFile, "--secret-env", "MY_SECRET")
	s.token = token
	cs := s.connect(t)
	pid := strconv.Itoa(s.cmd.Process.Pid)

	if got := callTool(t, cs, "Bash", map[string]any{"command": "id -u; id -g; echo $HOME"}); !strings.HasPrefix(got, "65534\n65534\n/") {
		t.Errorf("id: %q", got)
	}
	got := callTool(t, cs, "Bash", map[string]any{"command": "kill -KILL " + pid + "; echo kill=$?; " +
		"cat /proc/" + pid + "/environ >/dev/null 2>&1; echo environ=$?; " +
		"cat /proc/" + pid + "/mem >/dev/null 2>&1; echo mem=$?; " +
		"cat " + tokenFile + " >/dev/null 2>&1; echo token=$?"})
	for _, want := range []string{"kill=1", "environ=1", "mem=1", "token=1"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %s in %q", want, got)
		}
	}
	if !proctest.Alive(s.cmd.Process.Pid) {
		t.Fatal("a command killed sandboxd")
	}

	callTool(t, cs, "Write", map[string]any{"file_path": "sub/made-by-write.txt", "content": "one\n"})
	if got := callTool(t, cs, "Bash", map[string]any{"command": "echo two >> sub/made-by-write.txt && cat sub/made-by-write.txt && echo made > by-bash.txt"}); got != "one\ntwo\n" {
		t.Errorf("Bash on a file Write made: %q", got)
	}
	callTool(t, cs, "Read", map[string]any{"file_path": "by-bash.txt"})
	callTool(t, cs, "Edit", map[string]any{"file_path": "by-bash.txt", "old_string": "made", "new_string": "edited"})
	for _, rel := range []string{"sub", "sub/made-by-write.txt", "by-bash.txt"} {
		fi, err := os.Stat(filepath.Join(ws, rel))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
			t.Errorf("%s is %d:%d, want 65534:65534", rel, st.Uid, st.Gid)
		}
	}
}

// TestRunAsRefusesAnUnusableWorkspace: a user that could not write the
// workspace is refused at start, as bad input.
func TestRunAsRefusesAnUnusableWorkspace(t *testing.T) {
	proctest.RequireRoot(t)
	ws := t.TempDir() // root's, 0700
	err := run(context.Background(), []string{"--workspace", ws, "--run-as", "65534", "--stdio"},
		func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
	var bad *usageError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "is not writable by UID 65534") {
		t.Fatalf("err = %v, want bad input saying the workspace is not writable", err)
	}
}
