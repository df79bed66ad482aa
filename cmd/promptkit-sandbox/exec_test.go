package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
)

const directConfig = `spec:
  sandboxes:
    host:
      mode: direct
`

// TestExecAsAHookCommand drives exec as PromptKit's direct sandbox runs a
// hook, cold and through a serve found on the default socket, and checks
// that what the hook reads and writes and its status pass through exactly.
func TestExecAsAHookCommand(t *testing.T) {
	dir := shortTempDir(t)
	cfg := writeConfig(t, dir, directConfig)
	request := []byte(`{"hook":"provider","phase":"before_call","request":{"content":"please deny-me"}}`)

	coldEnv := isolated(t, "HOOK_SECRET=from-exec")
	runtimeDir := shortTempDir(t)
	// Served through the default socket: exec finds it on its own.
	servedEnv := []string{"XDG_RUNTIME_DIR=" + runtimeDir, execrelay.EnvSocket + "=", "HOOK_SECRET=from-exec"}
	srv := startServe(t, filepath.Join(runtimeDir, "promptkit-sandbox", "serve.sock"), []string{"SERVE_MARK=served"}, "--config", cfg)

	for _, mode := range []struct {
		name, mark string
		env        []string
	}{
		{"cold", "", coldEnv},
		{"served", "served", servedEnv},
	} {
		t.Run(mode.name, func(t *testing.T) {
			exec := func(stdin []byte, args ...string) execResult {
				return runExec(t, mode.env, stdin, append([]string{"--config", cfg}, args...)...)
			}
			// The verdict's bytes, exactly: no newline added or taken.
			verdict := `cat >/dev/null; printf '{"allow":false,"reason":"request contains deny-me"}'`
			if r := exec(request, "--sandbox", "host", "--", "sh", "-c", verdict); r.code != 0 || r.stdout != `{"allow":false,"reason":"request contains deny-me"}` || r.stderr != "" {
				t.Errorf("deny verdict: %+v", r)
			}
			if r := exec(request, "--sandbox", "host", "--", "cat"); r.code != 0 || r.stdout != string(request) || r.stderr != "" {
				t.Errorf("stdin echoed: %+v", r)
			}
			// A hook's status and stderr are its own; a forwarded
			// variable comes from exec's environment either way. Where it
			// runs shows in what it inherits: serve's environment.
			script := `printf 'out:%s:%s' "$HOOK_SECRET" "$SERVE_MARK"; printf 'boom\n' >&2; exit 3`
			if r := exec(nil, "--sandbox", "host", "--env", "HOOK_SECRET", "--", "sh", "-c", script); r.code != 3 || r.stdout != "out:from-exec:"+mode.mark || r.stderr != "boom\n" {
				t.Errorf("exit 3: %+v", r)
			}
			if r := exec(nil, "--sandbox", "host", "--timeout", "300ms", "--", "sleep", "30"); r.code != exitTimeout || !strings.HasPrefix(r.stderr, "promptkit-sandbox: exec: ") {
				t.Errorf("timeout: %+v", r)
			}
			if r := exec(nil, "--sandbox", "nope", "--", "true"); r.code != exitUsage || !strings.Contains(r.stderr, `no sandbox named "nope"`) {
				t.Errorf("unknown sandbox: %+v", r)
			}
			if r := exec(nil, "--sandbox", "host", "--", "/no/such/hook"); r.code != exitSandbox {
				t.Errorf("missing command: %+v", r)
			}
		})
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, srv.stderr)
	}
}

// TestExecNamedSocketMustAnswer: a socket the user names, by flag or
// environment, is not silently skipped when nothing answers.
func TestExecNamedSocketMustAnswer(t *testing.T) {
	dir := shortTempDir(t)
	cfg := writeConfig(t, dir, directConfig)
	sock := filepath.Join(dir, "none.sock")
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", isolated(t), []string{"--socket", sock}},
		{"env", append(isolated(t), execrelay.EnvSocket+"="+sock), nil},
	} {
		args := append(append([]string{"--config", cfg, "--sandbox", "host"}, tc.args...), "--", "true")
		r := runExec(t, tc.env, nil, args...)
		if r.code != exitSandbox || !strings.Contains(r.stderr, "no serve is listening on "+sock) || r.stdout != "" {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
}

// TestExecRefusesAServeOfAnotherConfig: a serve answers for its own config
// only (the same file through a symlink is the same config).
func TestExecRefusesAServeOfAnotherConfig(t *testing.T) {
	dir := shortTempDir(t)
	cfg := writeConfig(t, dir, directConfig)
	other := writeConfig(t, shortTempDir(t), directConfig)
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(cfg, link); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	startServe(t, sock, nil, "--config", cfg)

	r := runExec(t, isolated(t), nil, "--socket", sock, "--config", other, "--sandbox", "host", "--", "echo", "hi")
	want := "serves " + canonical(t, cfg) + ", not " + canonical(t, other)
	if r.code != exitSandbox || r.stdout != "" || !strings.Contains(r.stderr, want) {
		t.Errorf("another config: %+v", r)
	}
	r = runExec(t, isolated(t), nil, "--socket", sock, "--config", link, "--sandbox", "host", "--", "echo", "hi")
	if r.code != 0 || r.stdout != "hi\n" {
		t.Errorf("the config through a symlink: %+v", r)
	}
}

func canonical(t testing.TB, path string) string {
	t.Helper()
	c, err := canonicalConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestExecServedConcurrently: calls through one serve run side by side,
// each with its own stdin, output and status.
func TestExecServedConcurrently(t *testing.T) {
	dir := shortTempDir(t)
	cfg := writeConfig(t, dir, directConfig)
	sock := filepath.Join(dir, "s.sock")
	startServe(t, sock, nil, "--config", cfg) // and the CLI is built
	env := isolated(t)
	const calls = 8
	results := make(chan string, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := fmt.Sprintf("call-%d", i)
			r := runExec(t, env, []byte(in), "--socket", sock, "--config", cfg, "--sandbox", "host",
				"--", "sh", "-c", `sleep 0.2; cat; exit "$0"`, strconv.Itoa(i))
			if r.code != i || r.stdout != in {
				results <- fmt.Sprintf("call %d: %+v", i, r)
			}
		}()
	}
	wg.Wait()
	close(results)
	for msg := range results {
		t.Error(msg)
	}
}

// TestExecDefaultSocketStaleRunsCold: at the default socket, a file left
// by a serve that is gone is no serve, and the call runs cold, quietly.
func TestExecDefaultSocketStaleRunsCold(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	runtimeDir := shortTempDir(t)
	sock := filepath.Join(runtimeDir, "promptkit-sandbox", "serve.sock")
	if err := os.Mkdir(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	lis.SetUnlinkOnClose(false)
	lis.Close()
	env := []string{"XDG_RUNTIME_DIR=" + runtimeDir, execrelay.EnvSocket + "="}
	if r := runExec(t, env, []byte("x"), "--config", cfg, "--sandbox", "host", "--", "cat"); r.code != 0 || r.stdout != "x" || r.stderr != "" {
		t.Errorf("exec with a stale default socket: %+v", r)
	}
}
