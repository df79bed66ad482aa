package server

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// pidIn waits for the PID a command writes to file.
func pidIn(t *testing.T, file string) int {
	t.Helper()
	return proctest.ReadPIDsWithin(t, file, 1, 20*time.Second)[0]
}

func TestDenylistBothWays(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	for _, cmd := range []string{"sudo id", "`sudo` id", "/usr/bin/sudo id", "FOO=1 sudo id", "echo ok && su -", "mount /dev/sda1 /mnt", "shutdown -h now", "mkfs.ext4 /dev/sdb"} {
		if msg := fails(t, cs, "Bash", map[string]any{"command": cmd}); !strings.Contains(msg, "refused") && !strings.Contains(msg, "not allowed") {
			t.Errorf("Bash(%q): %q does not say it was refused", cmd, msg)
		}
	}
	os.WriteFile(filepath.Join(d.dir, "notes.txt"), []byte("the mount bug\n"), 0o644)
	for cmd, want := range map[string]string{
		`git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m "fix mount bug" && git log --format=%s`: "fix mount bug",
		"grep -rn mount .":  "./notes.txt:1:the mount bug",
		"echo sudo is fine": "sudo is fine",
	} {
		if got := ok(t, cs, "Bash", map[string]any{"command": cmd}); !strings.Contains(got, want) {
			t.Errorf("Bash(%q) = %q, want %q in it", cmd, got, want)
		}
	}
}

func TestBashResultAndTimeout(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	if got, want := ok(t, cs, "Bash", map[string]any{"command": "echo out; echo err >&2; exit 3"}), "out\n--- stderr ---\nerr\nExit code: 3"; strings.TrimSpace(got) != want {
		t.Errorf("Bash = %q, want %q", got, want)
	}
	if got := ok(t, cs, "Bash", map[string]any{"command": "read x; echo \"stdin:${x:-empty}\""}); !strings.Contains(got, "stdin:empty") {
		t.Errorf("stdin not empty: %q", got)
	}
	start := time.Now()
	got := ok(t, cs, "Bash", map[string]any{"command": "(sleep 300 & echo $! > grandchild.pid; wait) & sleep 300", "timeout": 1000})
	if !strings.Contains(got, "timed out") {
		t.Errorf("timeout result %q", got)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a 1s timeout took %v", took)
	}
	proctest.Gone(t, "the grandchild of a timed-out command", pidIn(t, filepath.Join(d.dir, "grandchild.pid")))
	if msg := fails(t, cs, "Bash", map[string]any{"command": "true", "timeout": 600001}); !strings.Contains(msg, "maximum") {
		t.Errorf("timeout over the max: %q", msg)
	}
}

// TestBackgroundedChildReturnsPromptly: `sleep 60 & echo hi` returns hi at
// once and the sleep dies with the call.
func TestBackgroundedChildReturnsPromptly(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	start := time.Now()
	got := ok(t, cs, "Bash", map[string]any{"command": "sleep 60 & echo $! > child.pid; echo hi"})
	if strings.TrimSpace(got) != "hi" {
		t.Errorf("Bash = %q", got)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	proctest.Gone(t, "the backgrounded sleep", pidIn(t, filepath.Join(d.dir, "child.pid")))
}

var statusLine = regexp.MustCompile(`Status: (\S+)`)

func TestBackgroundShells(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{Secrets: map[string]string{"MY_SECRET": registered}})
	cs := d.connect(t, streamable)
	started := ok(t, cs, "Bash", map[string]any{"command": "mkfifo go1 go2; echo one; echo e1 >&2; cat go1 >/dev/null; echo two; echo noise; cat go2 >/dev/null; exit 4", "run_in_background": true})
	id := regexp.MustCompile(`bash_[0-9a-f]+`).FindString(started)
	if id == "" {
		t.Fatalf("no shell ID in %q", started)
	}
	waitFor := func(want string, filter string) string {
		t.Helper()
		var all strings.Builder
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			all.WriteString(ok(t, cs, "BashOutput", map[string]any{"bash_id": id, "filter": filter}))
			if strings.Contains(all.String(), want) {
				return all.String()
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("never saw %q: %q", want, all.String())
		return ""
	}
	first := waitFor("e1", "")
	if !strings.Contains(first, "one") || statusLine.FindStringSubmatch(first)[1] != "running" {
		t.Errorf("first read %q", first)
	}
	if again := ok(t, cs, "BashOutput", map[string]any{"bash_id": id}); strings.Contains(again, "one") || strings.Contains(again, "e1") {
		t.Errorf("second read repeats old output: %q", again)
	}
	os.WriteFile(filepath.Join(d.dir, "go1"), nil, 0o644)
	second := waitFor("two", "^t")
	if strings.Contains(second, "noise") || strings.Contains(second, "one") {
		t.Errorf("filtered read %q", second)
	}
	os.WriteFile(filepath.Join(d.dir, "go2"), nil, 0o644)
	if last := waitFor("exited", ""); !strings.Contains(last, "4") || strings.Contains(last, "noise") {
		t.Errorf("final read %q (noise was consumed by the filtered read)", last)
	}

	// A secret printed in two halves, read in between, is still caught.
	started = ok(t, cs, "Bash", map[string]any{"command": "printf 'key AKIAIOSF'; sleep 1; printf 'ODNN7EXAMPLE and " + registered[:8] + "'; sleep 1; echo '" + registered[8:] + "'", "run_in_background": true})
	id = regexp.MustCompile(`bash_[0-9a-f]+`).FindString(started)
	out := waitFor("exited", "")
	if strings.Contains(out, "ODNN7EXAMPLE") || strings.Contains(out, registered[8:]) || !strings.Contains(out, "[REDACTED:aws-access-key-id]") || !strings.Contains(out, "[REDACTED:secret:MY_SECRET]") {
		t.Errorf("split secrets: %q", out)
	}

	// KillShell kills the whole group.
	started = ok(t, cs, "Bash", map[string]any{"command": "sleep 300 & echo $! > bg.pid; wait", "run_in_background": true})
	id = regexp.MustCompile(`bash_[0-9a-f]+`).FindString(started)
	pid := pidIn(t, filepath.Join(d.dir, "bg.pid"))
	ok(t, cs, "KillShell", map[string]any{"shell_id": id})
	proctest.Gone(t, "a killed shell's child", pid)
	if msg := fails(t, cs, "BashOutput", map[string]any{"bash_id": "bash_nope"}); !strings.Contains(msg, "no background shell") {
		t.Errorf("unknown ID: %q", msg)
	}
}

// TestCloseKillsBackgroundShells: shutting the server down leaves no
// shell behind.
func TestCloseKillsBackgroundShells(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	ok(t, cs, "Bash", map[string]any{"command": "sleep 300 & echo $! > bg.pid; wait", "run_in_background": true})
	pid := pidIn(t, filepath.Join(d.dir, "bg.pid"))
	d.srv.Close()
	proctest.Gone(t, "a background shell after Close", pid)
}

// TestBackgroundShellsBelongToTheirSession: over each transport, a
// second session can neither read nor kill the first one's shell, nor
// learn it exists; ending the first session kills its shell's tree.
func TestBackgroundShellsBelongToTheirSession(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{streamable, sse} {
		t.Run(string(tr), func(t *testing.T) {
			d := startDaemon(t, Config{})
			alice, mallory := d.connect(t, tr), d.connect(t, tr)
			started := ok(t, alice, "Bash", map[string]any{"command": "sleep 300 & echo $! > bg.pid; wait", "run_in_background": true})
			id := regexp.MustCompile(`bash_[0-9a-f]+`).FindString(started)
			pid := pidIn(t, filepath.Join(d.dir, "bg.pid"))

			want := `no background shell with ID "` + id + `" (there are none)`
			if msg := fails(t, mallory, "BashOutput", map[string]any{"bash_id": id}); !strings.Contains(msg, want) {
				t.Errorf("another session's BashOutput: %q, want %q", msg, want)
			}
			if msg := fails(t, mallory, "KillShell", map[string]any{"shell_id": id}); !strings.Contains(msg, want) {
				t.Errorf("another session's KillShell: %q, want %q", msg, want)
			}
			if out := ok(t, alice, "BashOutput", map[string]any{"bash_id": id}); statusLine.FindStringSubmatch(out)[1] != "running" {
				t.Errorf("its own session's BashOutput: %q", out)
			}

			alice.Close()
			proctest.Gone(t, "the child of a closed session's shell", pid)
		})
	}
}

// TestGitDirWritesRefused: over MCP, Write and Edit refuse .git files
// (a core.fsmonitor planted there runs on the host), Bash's git works.
func TestGitDirWritesRefused(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	ok(t, cs, "Bash", map[string]any{"command": "git init -q . && git config core.bare false"})
	ok(t, cs, "Read", map[string]any{"file_path": ".git/config"})
	msg := fails(t, cs, "Edit", map[string]any{"file_path": ".git/config", "old_string": "bare = false", "new_string": "fsmonitor = \"touch pwned\""})
	if !strings.Contains(msg, "inside a .git directory") {
		t.Errorf("Edit .git/config: %q", msg)
	}
	if msg := fails(t, cs, "Write", map[string]any{"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}); !strings.Contains(msg, "inside a .git directory") {
		t.Errorf("Write .git/hooks/pre-commit: %q", msg)
	}
	if out := ok(t, cs, "Bash", map[string]any{"command": "git config --get core.fsmonitor; ls .git/hooks/pre-commit 2>&1; echo done"}); !strings.HasSuffix(strings.TrimSpace(out), "No such file or directory\ndone") {
		t.Errorf("after the refusals: %q", out)
	}
}
