package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The harness of the adversarial suite (issue 16): one real sandboxd
// process per case and transport, driven by the official go-sdk client.

// advTransport names an MCP transport the suite attacks over.
type advTransport string

const (
	advStreamable advTransport = "streamable"
	advSSE        advTransport = "sse"
	advStdio      advTransport = "stdio"
)

var advTransports = []advTransport{advStreamable, advSSE, advStdio}

// advSecretName is the --secret-env variable every adversarial daemon is
// given; its value is the daemon's secret.
const advSecretName = "ADV_SECRET"

// advOrigin is the origin every adversarial daemon allows (--allowed-origin).
const advOrigin = "http://127.0.0.1:1"

// advDaemon is a running sandboxd under attack, and what the attacker's
// target knows about it.
type advDaemon struct {
	tr        advTransport
	ws        string // the workspace
	base      string // a directory beside the workspace, readable by the run-as user
	pid       int    // sandboxd's PID
	tokenFile string // the --token-file path
	token     string // the bearer token in it
	secret    string // the value of the --secret-env variable
	runAs     bool   // commands run as UID 65534 (sandboxd runs as root)
	cs        *mcp.ClientSession

	url, sseURL string // the HTTP endpoints; empty over stdio
}

// advOptions vary an adversarial daemon.
type advOptions struct {
	args []string // more flags
	env  []string // more environment
	// shim: every shell sources advShim (BASH_ENV).
	shim bool
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// startAdv starts sandboxd over tr with a registered secret, a token
// file and an allowed origin, and connects a session. As root the
// workspace belongs to UID 65534, so sandboxd runs the agent's commands
// as that user, its default. Everything ends with t.
func startAdv(t *testing.T, tr advTransport, o advOptions) *advDaemon {
	t.Helper()
	d := &advDaemon{tr: tr, secret: "adv-Secret-Value-" + randomHex(12), token: "adv-token-" + randomHex(24)}
	if os.Geteuid() == 0 {
		d.ws = nobodyWorkspace(t)
		d.base = filepath.Dir(d.ws)
		d.runAs = true
	} else {
		d.ws = t.TempDir()
		d.base = t.TempDir()
	}
	// Beside the workspace, where the run-as user can reach the directory
	// but not this file (0600, root's).
	d.tokenFile = filepath.Join(d.base, "token")
	if err := os.WriteFile(d.tokenFile, []byte(d.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--workspace", d.ws, "--token-file", d.tokenFile,
		"--secret-env", advSecretName, "--allowed-origin", advOrigin}, o.args...)
	env := append([]string{advSecretName + "=" + d.secret}, o.env...)
	if o.shim {
		shim := filepath.Join(d.base, "adv-shim.sh")
		if err := os.WriteFile(shim, []byte(advShim), 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, "BASH_ENV="+shim)
	}
	if tr == advStdio {
		d.startStdio(t, args, env)
		return d
	}
	s := startHTTPEnv(t, env, args...)
	// Stopped as a user would, before startHTTPEnv's SIGKILL, so sandboxd
	// removes what it made (the run-as user's temporary home).
	t.Cleanup(func() { stopGracefully(t, s.cmd) })
	d.pid = s.cmd.Process.Pid
	d.url = s.url
	for _, line := range s.out {
		if _, u, ok := strings.Cut(line, "MCP (HTTP+SSE):"); ok {
			d.sseURL = strings.TrimSpace(u)
		}
	}
	if d.sseURL == "" {
		t.Fatalf("no SSE endpoint announced: %q", s.out)
	}
	d.cs = d.connect(t)
	return d
}

// stopGracefully sends SIGTERM and waits for the process, killing it
// after 10 s.
func stopGracefully(t testing.TB, cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("sandboxd %d did not stop within 10 s of SIGTERM", cmd.Process.Pid)
		cmd.Process.Kill()
		<-done
	}
}

func (d *advDaemon) startStdio(t *testing.T, args, env []string) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--stdio"}, args...)...)
	cmd.Env = append(append(os.Environ(), "SANDBOXD_LOG_LEVEL=warn"), env...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "adversary", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		t.Fatal(err)
	}
	// Closing the session closes sandboxd's stdin and waits for it (then
	// SIGTERM, then SIGKILL).
	t.Cleanup(func() { cs.Close() })
	d.pid, d.cs = cmd.Process.Pid, cs
}

// connect opens another session to an HTTP daemon over its transport.
func (d *advDaemon) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	var ct mcp.Transport
	hc := &http.Client{Transport: bearer{d.token}}
	switch d.tr {
	case advStreamable:
		ct = &mcp.StreamableClientTransport{Endpoint: d.url, HTTPClient: hc, MaxRetries: -1}
	case advSSE:
		ct = &mcp.SSEClientTransport{Endpoint: d.sseURL, HTTPClient: hc}
	default:
		t.Fatalf("over %s there is one session per process", d.tr)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "adversary", Version: "0"}, nil)
	// The SSE stream lives on this context: it must outlive the call.
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatalf("connect over %s: %v", d.tr, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// advResult is a tool call's text and whether the tool reported an error.
type advResult struct {
	text  string
	isErr bool
}

// try calls a tool; only a failure of the call itself (not of the tool)
// ends the test.
func try(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) advResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%.200v): %v", tool, args, err)
	}
	return advResult{text: textOf(res), isErr: res.IsError}
}

// must calls a tool that must succeed.
func must(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	r := try(t, cs, tool, args)
	if r.isErr {
		t.Fatalf("%s(%.200v) failed: %s", tool, args, r.text)
	}
	return r.text
}

// refused calls a tool that must fail, and returns its message.
func refused(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	r := try(t, cs, tool, args)
	if !r.isErr {
		t.Fatalf("%s(%.200v) succeeded, want it refused: %.500s", tool, args, r.text)
	}
	return r.text
}

// bash runs a foreground command that must not fail as a tool call.
func (d *advDaemon) bash(t *testing.T, command string) string {
	t.Helper()
	return must(t, d.cs, "Bash", map[string]any{"command": command})
}

// put writes a file into the workspace from the host, readable by all.
func (d *advDaemon) put(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join(d.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if d.runAs {
		os.Chown(p, 65534, 65534)
	}
	return p
}

// fragments are the n-character pieces of s: a leak shows one.
func fragments(s string, n int) []string {
	var out []string
	for i := 0; i+n <= len(s); i++ {
		out = append(out, s[i:i+n])
	}
	return out
}

// leaksAny returns the first of pieces in text, or "".
func leaksAny(text string, pieces ...string) string {
	for _, p := range pieces {
		if p != "" && strings.Contains(text, p) {
			return p
		}
	}
	return ""
}
