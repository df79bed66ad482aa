package main

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeSocket: serve makes its socket 0600 in a directory it makes
// 0700, refuses to start where another serve answers, and removes the
// socket when SIGTERM stops it.
func TestServeSocket(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	sock := filepath.Join(shortTempDir(t), "made", "serve.sock")
	srv := startServe(t, sock, nil, "--config", cfg)

	for path, want := range map[string]os.FileMode{sock: 0o600, filepath.Dir(sock): 0o700} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %04o, want %04o", path, fi.Mode().Perm(), want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cliBinary(t), "serve", "--config", cfg, "--socket", sock).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "another serve is listening on "+sock) {
		t.Errorf("a second serve on the socket: %v\n%s", err, out)
	}
	// The refused serve left the first one's socket alone.
	if r := runExec(t, isolated(t), nil, "--socket", sock, "--config", cfg, "--sandbox", "host", "--", "echo", "ok"); r.code != 0 || r.stdout != "ok\n" {
		t.Errorf("exec after the refused serve: %+v", r)
	}

	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited %d on SIGTERM:\n%s", code, srv.stderr)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket left after SIGTERM: %v", err)
	}
}

// TestServeReplacesAStaleSocket: the socket of a serve that died (nothing
// answers on it) is replaced; a file that is no socket is not touched.
func TestServeReplacesAStaleSocket(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	dir := shortTempDir(t)
	sock := filepath.Join(dir, "serve.sock")
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	lis.SetUnlinkOnClose(false)
	lis.Close()
	startServe(t, sock, nil, "--config", cfg)
	if r := runExec(t, isolated(t), nil, "--socket", sock, "--config", cfg, "--sandbox", "host", "--", "echo", "ok"); r.code != 0 || r.stdout != "ok\n" {
		t.Errorf("exec through the serve that replaced a stale socket: %+v", r)
	}

	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(cliBinary(t), "serve", "--config", cfg, "--socket", plain).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "is not a socket") {
		t.Errorf("serve on a plain file: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(plain); string(b) != "mine" {
		t.Errorf("serve touched a file that is no socket: %q", b)
	}
}

// TestServeRefusesAnOpenDirectory: a socket directory others can write
// is refused.
func TestServeRefusesAnOpenDirectory(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	dir := shortTempDir(t)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(cliBinary(t), "serve", "--config", cfg, "--socket", filepath.Join(dir, "s.sock")).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "writable by group or others") {
		t.Errorf("serve in a 0777 directory: %v\n%s", err, out)
	}
}
