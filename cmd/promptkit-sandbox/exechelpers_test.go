package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
)

// The CLI binary and the docker plugin, built once per test binary into
// one directory (short, for socket paths), removed by TestMain.
var (
	buildDir     string
	buildDirOnce sync.Once
	cliOnce      sync.Once
	dockerOnce   sync.Once
)

func sharedBuildDir(t testing.TB) string {
	t.Helper()
	buildDirOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pks-exec-")
		if err == nil {
			buildDir = dir
		}
	})
	if buildDir == "" {
		t.Fatal("no build directory")
	}
	return buildDir
}

// cliBinary builds the CLI once; under -short it skips the test.
func cliBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping in -short mode: builds the CLI binary (make test runs it)")
	}
	bin := filepath.Join(sharedBuildDir(t), "promptkit-sandbox")
	cliOnce.Do(func() { plugintest.GoBuild(t, bin, ".", "") })
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the CLI binary was not built: %v", err)
	}
	return bin
}

// dockerPluginDir builds the docker plugin, as 0.9.0, into a plugin
// directory once and returns the directory.
func dockerPluginDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(sharedBuildDir(t), "plugins")
	bin := filepath.Join(dir, "promptkit-sandbox-docker_v0.9.0")
	dockerOnce.Do(func() {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		plugintest.GoBuild(t, bin, "../promptkit-sandbox-docker", "-X main.version=0.9.0")
	})
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the docker plugin was not built: %v", err)
	}
	return dir
}

func removeBuilds() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// shortTempDir is a temporary directory with a short path: a unix
// socket's path must fit in 108 bytes, which t.TempDir's may not.
func shortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pks-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// isolated is an environment in which no serve is found by default: the
// default socket lies in an empty runtime directory of the test's own.
func isolated(t testing.TB, extra ...string) []string {
	t.Helper()
	return append([]string{"XDG_RUNTIME_DIR=" + shortTempDir(t), execrelay.EnvSocket + "="}, extra...)
}

type execResult struct {
	code           int
	stdout, stderr string
}

// hookCommand is exec as PromptKit's direct sandbox runs a hook: stdin
// piped from the request, env the host's plus the hook's, and on its
// timeout SIGKILL with a WaitDelay of 500ms.
func hookCommand(ctx context.Context, t testing.TB, env []string, stdin []byte, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, cliBinary(t), append([]string{"exec"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 500 * time.Millisecond
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// runExec runs exec to its end, within a minute. The CLI must be built
// (cliBinary) before it is called from a goroutine.
func runExec(t testing.TB, env []string, stdin []byte, args ...string) execResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, stdout, stderr := hookCommand(ctx, t, env, stdin, args...)
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		// Errorf, not Fatalf: runExec may run on a goroutine of its own.
		t.Errorf("exec %v: %v", args, err)
		code = -1
	}
	return execResult{code, stdout.String(), stderr.String()}
}

// lockedBuffer is a serve's stderr, written by its process while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveProc is a running `promptkit-sandbox serve`.
type serveProc struct {
	cmd    *exec.Cmd
	socket string
	stderr *lockedBuffer
	done   chan struct{}
	err    error // of Wait, once done is closed
}

// startServe starts serve with args (--config ... at least) and waits for
// it to listen. env adds to its environment. It is stopped with SIGTERM
// when the test ends, if it still runs.
func startServe(t testing.TB, socket string, env []string, args ...string) *serveProc {
	t.Helper()
	args = append([]string{"serve", "--socket", socket}, args...)
	s := &serveProc{cmd: exec.Command(cliBinary(t), args...), socket: socket, stderr: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.Now().Add(time.Minute)
	for {
		// Its log line, not the socket file: a stale one may be there
		// before serve has replaced it.
		if strings.Contains(s.stderr.String(), "promptkit-sandbox: serving: socket=") {
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("serve exited before listening: %v\n%s", s.err, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen on %s within a minute:\n%s", socket, s.stderr)
		}
	}
}

// stop SIGTERMs serve and waits for it, up to 45 s, then kills it.
func (s *serveProc) stop(t testing.TB) (exitCode int) {
	t.Helper()
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(45 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			t.Errorf("serve did not stop within 45s of SIGTERM:\n%s", s.stderr)
		}
	}
	return s.cmd.ProcessState.ExitCode()
}

// writeConfig writes a RuntimeConfig into dir and returns its path.
func writeConfig(t testing.TB, dir, body string) string {
	t.Helper()
	cfg := filepath.Join(dir, "runtime.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}
