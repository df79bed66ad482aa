package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestSharedProcessAndConcurrentSpawns(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}})
	a := open(t, h, config.Sandbox{Name: "a", Mode: "test_direct"})
	b := open(t, h, config.Sandbox{Name: "b", Mode: "shared_echo"})

	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			in := fmt.Sprintf("call %d", i)
			resp, err := a.Spawn(context.Background(), sandbox.Request{Command: "sh", Args: []string{"-c", "cat; echo err-$X >&2"}, Stdin: []byte(in), Env: []string{"X=" + strconv.Itoa(i)}})
			if err != nil || string(resp.Stdout) != in || string(resp.Stderr) != fmt.Sprintf("err-%d\n", i) {
				errs <- fmt.Errorf("direct call %d: %q %q %v", i, resp.Stdout, resp.Stderr, err)
			}
		}()
		go func() {
			defer wg.Done()
			in := fmt.Sprintf("echo %d", i)
			resp, err := b.Spawn(context.Background(), sandbox.Request{Command: "x", Stdin: []byte(in)})
			if err != nil || string(resp.Stdout) != in {
				errs <- fmt.Errorf("echo call %d: %q %v", i, resp.Stdout, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if pids := st.pids(t); len(pids) != 1 {
		t.Fatalf("%d plugin processes started, want 1 shared by every sandbox and call", len(pids))
	}
}

func TestLargeStdoutIntact(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	sb := open(t, h, config.Sandbox{Mode: "test_flood"})
	const size = 64 << 20
	resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "flood", Args: []string{strconv.Itoa(size)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Stdout) != size || resp.StdoutTruncated {
		t.Fatalf("got %d bytes (truncated %v), want %d", len(resp.Stdout), resp.StdoutTruncated, size)
	}
	for i, c := range resp.Stdout {
		if c != byte('a'+i%26) {
			t.Fatalf("byte %d = %q, want %q", i, c, byte('a'+i%26))
		}
	}
}

func TestCancelKillsProcessInsidePlugin(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	sb := open(t, h, config.Sandbox{Mode: "test_direct"})
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := sb.Spawn(ctx, sandbox.Request{Command: "sh", Args: []string{"-c", "echo $$ > " + pidFile + "; exec sleep 60"}, Timeout: time.Minute})
		done <- err
	}()
	pid := waitPidFile(t, pidFile)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Spawn did not return after cancel")
	}
	waitGone(t, 5*time.Second, pid)
}

func TestTypedErrorsCrossThePlugin(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	sb := open(t, h, config.Sandbox{Mode: "test_direct"})

	_, err := sb.Spawn(context.Background(), sandbox.Request{Command: "sh", Args: []string{"-c", "exit 7"}})
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || xe.Code != 7 {
		t.Fatalf("exit: %v", err)
	}
	_, err = sb.Spawn(context.Background(), sandbox.Request{Command: "sleep", Args: []string{"10"}, Timeout: 100 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("timeout: %v", err)
	}
	_, err = sb.Spawn(context.Background(), sandbox.Request{Command: "/nonexistent"})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "/nonexistent") {
		t.Fatalf("start: %v", err)
	}
	resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "sh", Args: []string{"-c", "kill -SEGV $$"}})
	if !errors.As(err, &xe) || xe.Code != 128+11 || resp.Err != err {
		t.Fatalf("signal: %v (resp.Err %v)", err, resp.Err)
	}
}

func TestCrashMidCallThenRecover(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	st := trackStarts(t)
	baseGoroutines := runtime.NumGoroutine()
	h, err := New(Options{Dirs: []string{dir}, Env: emptyEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	crash := open(t, h, config.Sandbox{Name: "crash", Mode: "test_crash"})
	echo := open(t, h, config.Sandbox{Name: "echo", Mode: "shared_echo"})
	for i := range 50 {
		start := time.Now()
		_, err := crash.Spawn(context.Background(), sandbox.Request{Command: "x"})
		if !errors.Is(err, sandbox.ErrTransport) {
			t.Fatalf("round %d: got %v, want a transport error", i, err)
		}
		// The plugin sleeps 50ms before it dies; the error must follow
		// the death at once.
		if elapsed := time.Since(start); elapsed > time.Second {
			t.Fatalf("round %d: crash reported after %v", i, elapsed)
		}
		resp, err := echo.Spawn(context.Background(), sandbox.Request{Command: "x", Stdin: []byte("alive")})
		if err != nil || string(resp.Stdout) != "alive" {
			t.Fatalf("round %d: call after crash: %q %v", i, resp.Stdout, err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	pids := st.pids(t)
	if len(pids) != 51 {
		t.Fatalf("%d plugin starts, want 51 (one, then one per crash)", len(pids))
	}
	waitGone(t, 5*time.Second, pids...)
	goroutinesSettle(t, baseGoroutines)
}

// TestBackendTransportErrorStaysInItsCall: a backend's transport error
// (its engine did not answer) is that call's error; the plugin process
// that reported it is fine, and a call of another sandbox it serves runs
// on to its end.
func TestBackendTransportErrorStaysInItsCall(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}, Env: emptyEnv(t)})
	flaky := open(t, h, config.Sandbox{Name: "flaky", Mode: "test_flaky"})
	slow := open(t, h, config.Sandbox{Name: "slow", Mode: "test_direct"})
	done := make(chan error, 1)
	go func() {
		resp, err := slow.Spawn(context.Background(), sandbox.Request{Command: "sh", Args: []string{"-c", "sleep 1; printf done"}, Timeout: time.Minute})
		if err == nil && string(resp.Stdout) != "done" {
			err = fmt.Errorf("stdout %q", resp.Stdout)
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // the slow call is under way
	for range 5 {
		_, err := flaky.Spawn(context.Background(), sandbox.Request{Command: "x"})
		if !errors.Is(err, sandbox.ErrTransport) || errors.Is(err, plugin.ErrConnection) {
			t.Fatalf("flaky: err = %v, want the backend's transport error, not a broken connection", err)
		}
		if want := "docker engine at unix:///var/run/docker.sock is unreachable"; err.Error() != want {
			t.Errorf("flaky: err = %q, want %q", err, want)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("the other sandbox's call: %v", err)
	}
	if pids := st.pids(t); len(pids) != 1 {
		t.Errorf("%d plugin starts, want 1: a backend's error restarted the plugin", len(pids))
	}
}

// TestHostHoldsTheTimeout: the host ends a call sandbox.Grace past its
// timeout whatever the plugin does (a backend that ignores its context,
// a plugin frozen with SIGSTOP), and a result that arrives after the
// timeout is a timeout.
func TestHostHoldsTheTimeout(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}, Env: emptyEnv(t)})
	deaf := open(t, h, config.Sandbox{Name: "deaf", Mode: "test_deaf"})
	const timeout = time.Second
	bounded := func(t *testing.T, start time.Time, err error) {
		t.Helper()
		took := time.Since(start)
		if !errors.Is(err, sandbox.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, plugin.ErrConnection) {
			t.Errorf("err = %v, want a timeout", err)
		}
		if !strings.Contains(fmt.Sprint(err), "timed out after 1s") {
			t.Errorf("err = %q, want it to say timed out after 1s", err)
		}
		if took < timeout || took > timeout+sandbox.Grace+500*time.Millisecond {
			t.Errorf("returned after %v, want within %v of the %v timeout", took, sandbox.Grace+500*time.Millisecond, timeout)
		}
	}
	t.Run("ignores its context", func(t *testing.T) {
		start := time.Now()
		_, err := deaf.Spawn(context.Background(), sandbox.Request{Command: "x", Args: []string{"30s"}, Timeout: timeout})
		bounded(t, start, err)
		if !strings.Contains(fmt.Sprint(err), "did not answer within 1s of it") {
			t.Errorf("err = %v, want it to say the plugin did not answer", err)
		}
	})
	t.Run("answers late", func(t *testing.T) {
		start := time.Now()
		resp, err := deaf.Spawn(context.Background(), sandbox.Request{Command: "x", Args: []string{"1400ms"}, Timeout: timeout})
		bounded(t, start, err)
		if string(resp.Stdout) != "late" {
			t.Errorf("stdout = %q, want what the plugin sent", resp.Stdout)
		}
	})
	t.Run("frozen", func(t *testing.T) {
		direct := open(t, h, config.Sandbox{Name: "direct", Mode: "test_direct"})
		pids := st.pids(t)
		if len(pids) != 1 {
			t.Fatalf("%d plugin processes, want 1", len(pids))
		}
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := direct.Spawn(context.Background(), sandbox.Request{Command: "sleep", Args: []string{"30"}, Timeout: timeout})
			done <- err
		}()
		time.Sleep(200 * time.Millisecond)
		if err := syscall.Kill(pids[0], syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = syscall.Kill(pids[0], syscall.SIGCONT) }()
		bounded(t, start, <-done)
	})
}

// TestOpenIsBounded: a plugin whose Open never returns costs the host
// the sandbox's open_timeout, a timeout naming it, and nothing more: the
// plugin goes on serving other sandboxes.
func TestOpenIsBounded(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}, Env: emptyEnv(t)})
	start := time.Now()
	_, err := h.Open(config.Sandbox{Name: "stuck", Mode: "test_stuck", OpenTimeout: time.Second})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Open returned after %v, want about its 1s open_timeout", took)
	}
	if !errors.Is(err, sandbox.ErrTimeout) || !strings.Contains(fmt.Sprint(err), "no answer within 1s (open_timeout)") {
		t.Fatalf("err = %v, want a timeout naming open_timeout", err)
	}
	sb := open(t, h, config.Sandbox{Name: "after", Mode: "shared_echo"})
	resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "x", Stdin: []byte("alive")})
	if err != nil || string(resp.Stdout) != "alive" {
		t.Fatalf("a sandbox opened after: %q %v", resp.Stdout, err)
	}
}

// TestFailedStartIsRememberedAndExplained: a plugin that never completes
// its handshake costs one start timeout, once: the host remembers it
// failed, and the error names the plugin, says why and quotes the last
// of its stderr, whatever the log level.
func TestFailedStartIsRememberedAndExplained(t *testing.T) {
	dir := t.TempDir()
	path := install(t, testPlugin, dir, "promptkit-sandbox-stall_v1.0.0")
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}, Env: emptyEnv(t), StartTimeout: time.Second})
	start := time.Now()
	sb := open(t, h, config.Sandbox{Name: "echo", Mode: "shared_echo", Plugin: "test"})
	if _, err := sb.Spawn(context.Background(), sandbox.Request{Command: "x"}); err != nil {
		t.Fatal(err)
	}
	_, err := h.Open(config.Sandbox{Name: "s", Mode: "stall_direct", Plugin: "stall"})
	first := time.Since(start)
	for _, want := range []string{"start plugin " + path, "timeout", "testplugin: waiting for a database that never answers"} {
		if !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("err = %v, want it to say %q", err, want)
		}
	}
	if !errors.Is(err, sandbox.ErrStart) {
		t.Errorf("err = %v, want ErrStart", err)
	}
	start = time.Now()
	_, err2 := h.Open(config.Sandbox{Name: "s2", Mode: "stall_direct", Plugin: "stall"})
	if again := time.Since(start); again > 200*time.Millisecond || fmt.Sprint(err2) != fmt.Sprint(err) {
		t.Errorf("second open after %v (first %v): %v; want the same error at once", again, first, err2)
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-alpha_v1.0.0")
	install(t, testPlugin, dir, "promptkit-sandbox-beta_v1.0.0")
	st := trackStarts(t)
	h, err := New(Options{Dirs: []string{dir}, Env: emptyEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	a := open(t, h, config.Sandbox{Name: "a", Mode: "alpha_hang"})
	open(t, h, config.Sandbox{Name: "b", Mode: "beta_direct"})
	// A call in flight when Close comes must end, not hang.
	done := make(chan error, 1)
	go func() {
		_, err := a.Spawn(context.Background(), sandbox.Request{Command: "x"})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 8*time.Second {
		t.Fatalf("Close took %v", elapsed)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("in-flight call succeeded across Close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight call hung after Close")
	}
	pids := st.pids(t)
	if len(pids) != 2 {
		t.Fatalf("%d plugin processes, want 2", len(pids))
	}
	waitGone(t, 2*time.Second, pids...)
}

func TestPluginLogsReachHostLogger(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	logs := newSyncBuffer()
	h := newHost(t, Options{Dirs: []string{dir}, Logger: testLogger(logs)})
	sb := open(t, h, config.Sandbox{Mode: "shared_echo"})
	if _, err := sb.Spawn(context.Background(), sandbox.Request{Command: "x", Stdin: []byte("abc")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "[WARN]  host.test: echoing: bytes=3") {
		if time.Now().After(deadline) {
			t.Fatalf("plugin log line not in host log:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(logs.String(), "[DEBUG]") || strings.Contains(logs.String(), "[TRACE]") {
		t.Fatalf("host at INFO shows debug output:\n%s", logs.String())
	}
}

func TestStartTimeout(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "promptkit-sandbox-slow_v1.0.0")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Options{Dirs: []string{dir}, StartTimeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := h.Open(config.Sandbox{Name: "sb", Mode: "slow_x"})
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("start timeout of 300ms took %v", elapsed)
	}
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("got %v", err)
	}
}

func TestReattachToDebugPlugin(t *testing.T) {
	dir := t.TempDir()
	path := install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	cmd := exec.Command(path)
	// Its socket directory goes in TMPDIR; SIGKILL leaves no chance to
	// remove it.
	cmd.Env = append(os.Environ(), plugin.EnvDebug+"=1", "TMPDIR="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), plugin.EnvReattach+"="); ok {
				line <- strings.Trim(v, "'")
			}
		}
	}()
	var reattach string
	select {
	case reattach = <-line:
	case <-time.After(10 * time.Second):
		t.Fatal("debug plugin printed no reattach line")
	}
	// Nothing on disk: the plugin is found only through the reattach list.
	h := newHost(t, Options{Dirs: []string{t.TempDir()}, Reattach: reattach})
	sb := open(t, h, config.Sandbox{Mode: "shared_echo"})
	resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "x", Stdin: []byte("attached")})
	if err != nil || string(resp.Stdout) != "attached" {
		t.Fatalf("spawn through reattached plugin: %q %v", resp.Stdout, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHostKilledTakesPluginDown SIGKILLs a real host process (the test
// binary re-run as a host) and requires its plugin, and the process the
// plugin was running, to be gone within 2 s.
func TestHostKilledTakesPluginDown(t *testing.T) {
	if os.Getenv("HOST_KILL_CHILD") == "1" {
		hostChild()
		return
	}
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	st := trackStarts(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHostKilledTakesPluginDown$")
	// The killed host cannot remove its plugin's socket directory: keep
	// it in a directory the test removes.
	cmd.Env = append(os.Environ(), "HOST_KILL_CHILD=1", "HOST_KILL_DIR="+dir, "HOST_KILL_PIDFILE="+pidFile, "TMPDIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	grandchild := waitPidFile(t, pidFile)
	pids := st.pids(t)
	if len(pids) != 1 {
		t.Fatalf("plugin starts: %v\n%s", pids, out.String())
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	waitGone(t, 2*time.Second, pids[0], grandchild)
}

// hostChild is the host process of TestHostKilledTakesPluginDown: it runs
// a long command through a plugin and waits to be killed.
func hostChild() {
	h, err := New(Options{Dirs: []string{os.Getenv("HOST_KILL_DIR")}, Env: &emptyEnvValue})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	sb, err := h.Open(config.Sandbox{Name: "sb", Mode: "test_direct"})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	_, err = sb.Spawn(context.Background(), sandbox.Request{Command: "sh", Args: []string{"-c", "echo $$ > " + os.Getenv("HOST_KILL_PIDFILE") + "; exec sleep 60"}, Timeout: time.Minute})
	fmt.Println("spawn returned:", err)
	os.Exit(1)
}

var emptyEnvValue = func() discovery.Env {
	d := os.TempDir()
	return discovery.Env{Home: d, WorkDir: d, ExeDir: filepath.Join(d, "none")}
}()

func waitPidFile(t testing.TB, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after 10s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLateOpenIsClosed: a plugin that finishes building a sandbox after
// the host stopped waiting for it closes that sandbox, rather than hold
// it (a container, a pod's exec session) for as long as it runs.
func TestLateOpenIsClosed(t *testing.T) {
	dir, closed := t.TempDir(), t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}, Env: emptyEnv(t)})
	_, err := h.Open(config.Sandbox{Name: "late", Mode: "test_late", OpenTimeout: 500 * time.Millisecond,
		Config: map[string]any{"open_delay": "1500ms", "closed_dir": closed}})
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(closed, "late")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the plugin never closed the sandbox it built after the host gave up on it")
		}
		time.Sleep(50 * time.Millisecond)
	}
	sb := open(t, h, config.Sandbox{Name: "after", Mode: "test_late", Config: map[string]any{"closed_dir": closed}})
	if _, err := os.Stat(filepath.Join(closed, "after")); err == nil {
		t.Fatal("a sandbox opened in time was closed")
	}
	_ = sb
}
