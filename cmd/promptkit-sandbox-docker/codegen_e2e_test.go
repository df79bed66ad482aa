package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/dockerbox"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/otlptest"
	"github.com/altairalabs/promptkit-sandbox/internal/scrapetest"
)

// killBound is how soon after the plugin's SIGKILL its codegen container
// must be gone: the engine closes the container's stdin when the
// plugin's attach dies, sandboxd exits, and the engine removes it
// (AutoRemove). Measured here: well under a second.
const killBound = 10 * time.Second

// codegenSetup writes a config declaring a docker_codegen sandbox "code"
// on a workspace, and builds the CLI and this plugin. Its private
// directories go under codegenDir, and serve's socket in sockDir.
type codegenSetup struct {
	cli, pluginDir, cfg, workspace, codegenDir, sockDir string
	// env is added to the commands' environment.
	env []string
}

func newCodegenSetup(t *testing.T) codegenSetup {
	t.Helper()
	image := dockertest.Image(t, dockertest.Sandboxd)
	dir := t.TempDir()
	cli, pluginDir := buildCLIAndPlugin(t, dir, "0.9.0")
	ws := filepath.Join(dir, "repo")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, 65532, 65532); err != nil {
		t.Skipf("cannot chown the workspace to the image's user: %v", err)
	}
	// The workspace's cache volume outlives its sandboxes by design;
	// not the test.
	t.Cleanup(func() {
		for _, v := range cacheVolumesOf(t, ws) {
			removeVolumeSoon(v)
		}
	})
	cfg := filepath.Join(dir, "runtime.yaml")
	body := "spec:\n  sandboxes:\n    code:\n      mode: docker_codegen\n      image: " + image +
		"\n      workspace: ./repo\n      network: none\n      memory: 512m\n      cpus: 1\n      idle_timeout: 30m\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// Short: a socket path has 108 bytes.
	sockDir, err := os.MkdirTemp("", "pkcg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	return codegenSetup{cli: cli, pluginDir: pluginDir, cfg: cfg, workspace: ws, codegenDir: filepath.Join(dir, "codegen"), sockDir: sockDir}
}

func (s codegenSetup) command(args ...string) *exec.Cmd {
	cmd := exec.Command(s.cli, args...)
	cmd.Env = append(os.Environ(), dockerbox.EnvCodegenDir+"="+s.codegenDir, "PROMPTKIT_SANDBOX_SOCKET="+filepath.Join(s.sockDir, "serve.sock"))
	cmd.Env = append(cmd.Env, s.env...)
	return cmd
}

// upReport is what codegen up --json prints.
type upReport struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Endpoint  string `json:"endpoint"`
	Token     string `json:"token"`
	Workspace string `json:"workspace"`
	// WorkspaceVolume is set by up --workspace-volume.
	WorkspaceVolume string            `json:"workspace_volume"`
	Details         map[string]string `json:"details"`
	HeldBy          string            `json:"held_by"`
	MCPJSON         struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	} `json:"mcp_json"`
}

// startUp starts codegen up --json and returns the process and its
// report, once it has printed it.
func (s codegenSetup) startUp(t *testing.T, extra ...string) (*exec.Cmd, upReport) {
	t.Helper()
	cmd := s.command(append([]string{"codegen", "up", "--plugin-dir", s.pluginDir, "--config", s.cfg, "--sandbox", "code", "--json"}, extra...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if cmd.ProcessState == nil {
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("codegen up printed nothing: %v", err)
	}
	var r upReport
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("codegen up --json: %v: %q", err, line)
	}
	return cmd, r
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// useSandbox writes a file through the endpoint with the official client
// and checks it landed in the workspace.
func useSandbox(t *testing.T, endpoint, token, workspace, file string) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "codegen-e2e", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer(token)}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Write", Arguments: map[string]any{"file_path": file, "content": "hi\n"}})
	if err != nil || res.IsError {
		t.Fatalf("Write: %v %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(workspace, file)); err != nil {
		t.Errorf("the file written through MCP is not in the workspace: %v", err)
	}
}

// waitGone waits until no container carries the sandbox's id label.
func waitGone(t *testing.T, id string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		out := dockertest.Docker(t, "ps", "-aq", "--filter", "label="+dockerbox.LabelID+"="+id)
		if strings.TrimSpace(out) == "" {
			return time.Since(start)
		}
		if time.Since(start) > within {
			dockertest.Docker(t, "rm", "-f", strings.Fields(out)[0])
			t.Fatalf("container of %s still there after %v", id, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCodegenUpForeground: codegen up holds the sandbox in the
// foreground; its .mcp.json works with the official client; SIGINT
// releases it: no container, no private directory, the workspace kept.
func TestCodegenUpForeground(t *testing.T) {
	s := newCodegenSetup(t)
	cmd, r := s.startUp(t)
	if r.HeldBy != "foreground" {
		t.Errorf("held_by %q", r.HeldBy)
	}
	srv := r.MCPJSON.MCPServers["code"]
	if srv.Type != "http" || srv.URL != r.Endpoint || srv.Headers["Authorization"] != "Bearer "+r.Token || !strings.HasSuffix(srv.URL, "/mcp") {
		t.Errorf(".mcp.json: %+v", r.MCPJSON)
	}
	useSandbox(t, srv.URL, r.Token, s.workspace, "fg.txt")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("codegen up after SIGINT: %v", err)
	}
	waitGone(t, r.ID, 5*time.Second)
	if _, err := os.Stat(r.Details["dir"]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("private directory left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.workspace, "fg.txt")); err != nil {
		t.Errorf("workspace lost the agent's file: %v", err)
	}
}

// TestCodegenPluginSIGKILL: SIGKILL the plugin holding a sandbox: the
// container is gone within killBound, and the next plugin start sweeps
// the private directory it left.
func TestCodegenPluginSIGKILL(t *testing.T) {
	s := newCodegenSetup(t)
	up, r := s.startUp(t)
	pidText := strings.TrimSpace(dockertest.Docker(t, "inspect", "--format", "{{index .Config.Labels \""+dockerbox.LabelPID+"\"}}", r.Details["container"]))
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		t.Fatalf("plugin pid label %q", pidText)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	took := waitGone(t, r.ID, killBound)
	t.Logf("the container was gone %v after the plugin's SIGKILL", took.Round(time.Millisecond))
	// up notices that its sandbox is gone and says so.
	exited := make(chan error, 1)
	go func() { exited <- up.Wait() }()
	select {
	case err := <-exited:
		if code := exitCode(err); code != 125 {
			t.Errorf("codegen up exited %d after its plugin's SIGKILL, want 125", code)
		}
	case <-time.After(10 * time.Second):
		t.Error("codegen up still running 10s after its plugin's SIGKILL")
	}

	// A new plugin process sweeps the directory the dead one left.
	_, r2 := s.startUp(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(r.Details["dir"]); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead plugin's directory %s was not swept", r.Details["dir"])
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(r2.Details["dir"]); err != nil {
		t.Errorf("the live sandbox's directory was swept: %v", err)
	}
}

// TestCodegenThroughServe: with a serve of the config running, up hands
// the sandbox to it and returns; ls lists it without its token; down
// releases it.
func TestCodegenThroughServe(t *testing.T) {
	recv := otlptest.New(t)
	s := newCodegenSetup(t)
	s.env = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL}
	metricsAddr := freeLoopbackAddr(t)
	serve := s.command("serve", "--plugin-dir", s.pluginDir, "--config", s.cfg, "--metrics-addr", metricsAddr)
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	sock := filepath.Join(s.sockDir, "serve.sock")
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve never listened")
		}
		time.Sleep(50 * time.Millisecond)
	}
	up := s.command("codegen", "up", "--config", s.cfg, "--sandbox", "code", "--json")
	up.Stderr = os.Stderr
	out, err := up.Output()
	if err != nil {
		t.Fatalf("codegen up through serve: %v", err)
	}
	var r upReport
	if err := json.Unmarshal(out, &r); err != nil || r.HeldBy != "serve" {
		t.Fatalf("codegen up: %v %q", err, out)
	}
	useSandbox(t, r.Endpoint, r.Token, s.workspace, "served.txt")

	// One trace: the CLI's span, the serve's (a plugin server itself),
	// the docker plugin's, the provider's, sandboxd's start.
	var chain []otlptest.Span
	for deadline := time.Now().Add(20 * time.Second); len(chain) < 5 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		chain = traceChain(recv.Spans(), "codegen.provision", "plugin.provision", "plugin.provision", "docker.codegen", "sandboxd.start")
	}
	if len(chain) < 5 {
		t.Errorf("the provisioning through serve is not one trace: linked %d of 5 spans (%v received)", len(chain), spanNames(recv.Spans()))
	}

	ls, err := s.command("codegen", "ls", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ls), r.ID) || strings.Contains(string(ls), r.Token) {
		t.Errorf("codegen ls: %s", ls)
	}

	// /metrics: the sandbox, counted by state, and what it uses now.
	metricsURL := "http://" + metricsAddr + "/metrics"
	metrics := scrapetest.Get(t, metricsURL)
	of := `{id="` + r.ID + `",mode="docker_codegen",sandbox="code"}`
	if !strings.Contains(metrics, `promptkit_sandbox_codegen_sandboxes{mode="docker_codegen",sandbox="code",state="running"} 1`+"\n") {
		t.Errorf("/metrics does not count the running sandbox:\n%s", scrapetest.Lines(metrics, "promptkit_sandbox_codegen"))
	}
	for _, name := range []string{"promptkit_sandbox_codegen_memory_bytes", "promptkit_sandbox_codegen_pids", "promptkit_sandbox_codegen_cpu_seconds_total", "promptkit_sandbox_codegen_workspace_bytes"} {
		if v, ok := scrapetest.Value(metrics, name+of); !ok || v <= 0 {
			t.Errorf("/metrics: %s%s = %v (found: %v), want more than 0:\n%s", name, of, v, ok, scrapetest.Lines(metrics, "promptkit_sandbox_codegen"))
		}
	}
	if v, _ := scrapetest.Value(metrics, "promptkit_sandbox_codegen_memory_limit_bytes"+of); v != 512<<20 {
		t.Errorf("/metrics: memory limit %v, want the entry's 512m", v)
	}

	// pause: ls says so, a call is refused with why; resume: it serves.
	if out, err := s.command("codegen", "pause", r.ID).Output(); err != nil || string(out) != "paused "+r.ID+"\n" {
		t.Fatalf("codegen pause: %v %q", err, out)
	}
	if m := scrapetest.Get(t, metricsURL); !strings.Contains(m, `promptkit_sandbox_codegen_sandboxes{mode="docker_codegen",sandbox="code",state="paused"} 1`+"\n") {
		t.Errorf("/metrics does not count the paused sandbox:\n%s", scrapetest.Lines(m, "promptkit_sandbox_codegen_sandboxes"))
	}
	if ls, err := s.command("codegen", "ls").Output(); err != nil || !strings.Contains(string(ls), "paused") {
		t.Errorf("codegen ls while paused: %v\n%s", err, ls)
	}
	req, _ := http.NewRequest(http.MethodPost, r.Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+r.Token)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Error(err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "codegen resume "+r.ID) {
			t.Errorf("a call while paused: %d %s", resp.StatusCode, body)
		}
	}
	if out, err := s.command("codegen", "resume", r.ID).Output(); err != nil || string(out) != "resumed "+r.ID+"\n" {
		t.Fatalf("codegen resume: %v %q", err, out)
	}
	useSandbox(t, r.Endpoint, r.Token, s.workspace, "resumed.txt")
	if code := exitCode(s.command("codegen", "pause", "cg-nosuch").Run()); code != 2 {
		t.Errorf("pause of an unknown id exited %d, want 2", code)
	}

	// fork: two new sandboxes of the serve's, each with a copy of the
	// workspace, released by down.
	out, err = s.command("codegen", "fork", r.ID, "--count", "2", "--json").Output()
	if err != nil {
		t.Fatalf("codegen fork: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("codegen fork --count 2 printed %d lines: %s", len(lines), out)
	}
	for _, line := range lines {
		var f upReport
		if err := json.Unmarshal([]byte(line), &f); err != nil || f.ID == r.ID || f.Details["forked_from"] != r.ID {
			t.Fatalf("a fork: %v %s", err, line)
		}
		if b, err := os.ReadFile(filepath.Join(f.Workspace, "resumed.txt")); err != nil || string(b) != "hi\n" {
			t.Errorf("fork %s: resumed.txt %q (%v), want the source's", f.ID, b, err)
		}
		useSandbox(t, f.Endpoint, f.Token, f.Workspace, "forked.txt")
		if err := s.command("codegen", "down", f.ID).Run(); err != nil {
			t.Errorf("codegen down %s: %v", f.ID, err)
		}
	}
	if _, err := os.Stat(filepath.Join(s.workspace, "forked.txt")); err == nil {
		t.Error("a fork wrote into the source's workspace")
	}
	down := s.command("codegen", "down", r.ID)
	down.Stderr = os.Stderr
	if err := down.Run(); err != nil {
		t.Fatalf("codegen down: %v", err)
	}
	waitGone(t, r.ID, 5*time.Second)
	if m := scrapetest.Get(t, metricsURL); strings.Contains(m, r.ID) {
		t.Errorf("/metrics still has the released sandbox:\n%s", scrapetest.Lines(m, r.ID))
	}
	if _, err := os.Stat(r.Details["dir"]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("private directory left after down: %v", err)
	}
	if code := exitCode(s.command("codegen", "down", r.ID).Run()); code != 2 {
		t.Errorf("second down exited %d, want 2", code)
	}
	// down keeps the workspace's cache volume for its next sandbox;
	// down --purge removes it.
	vol := r.Details["cache_volume"]
	if got := cacheVolumesOf(t, s.workspace); vol == "" || !slices.Equal(got, []string{vol}) {
		t.Fatalf("cache volumes after down: %q; want [%s]", got, vol)
	}
	out, err = s.command("codegen", "up", "--config", s.cfg, "--sandbox", "code", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &r); err != nil || r.Details["cache_volume"] != vol {
		t.Fatalf("second up: %v, cache volume %q, want %s", err, r.Details["cache_volume"], vol)
	}
	purge := s.command("codegen", "down", r.ID, "--purge")
	purge.Stderr = os.Stderr
	if err := purge.Run(); err != nil {
		t.Fatalf("codegen down --purge: %v", err)
	}
	if got := cacheVolumesOf(t, s.workspace); len(got) != 0 {
		t.Errorf("cache volumes after down --purge: %q", got)
	}

	// A sandbox still held when serve stops goes with it.
	out, err = s.command("codegen", "up", "--config", s.cfg, "--sandbox", "code", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = serve.Wait()
	waitGone(t, r.ID, 10*time.Second)
}

// removeVolumeSoon removes the volume v, retrying for a while as long
// as the engine says it is in use: a sandbox whose `up` the test's
// cleanup has just killed is still being removed, and mounts it.
func removeVolumeSoon(v string) {
	for deadline := time.Now().Add(killBound); ; time.Sleep(100 * time.Millisecond) {
		out, err := exec.Command("docker", "volume", "rm", "-f", v).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "in use") || time.Now().After(deadline) {
			return
		}
	}
}

// cacheVolumesOf lists the docker_codegen cache volumes labelled for
// workspace (resolved, as the provider labels it).
func cacheVolumesOf(t *testing.T, workspace string) []string {
	t.Helper()
	if real, err := filepath.EvalSymlinks(workspace); err == nil {
		workspace = real
	}
	out, err := exec.Command("docker", "volume", "ls", "-q", "--filter", "label="+dockerbox.LabelKind+"="+dockerbox.KindCache,
		"--filter", "label="+dockerbox.LabelWorkspace+"="+workspace).Output()
	if err != nil {
		t.Fatalf("docker volume ls: %v", err)
	}
	return strings.Fields(string(out))
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
