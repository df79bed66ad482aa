package dockerbox

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// codegenImage is the sandboxd test image (internal/dockertest).
func codegenImage(t *testing.T) string {
	t.Helper()
	return dockertest.Image(t, dockertest.Sandboxd)
}

// newTestProvider is a provider whose private directories go in a
// directory of the test's own.
func newTestProvider(t testing.TB) (*CodegenProvider, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "codegen")
	p := NewCodegenProvider(DefaultHardening, nil)
	p.root = root
	// Workspaces of the test live under its temporary root; the cache
	// volumes a workspace keeps past Release go with them (registered
	// first, so it runs after the provider's Close).
	dockertest.CleanupWithEngine(t, func() { removeCacheVolumesUnder(t, filepath.Dir(filepath.Dir(root))) })
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("provider Close: %v", err)
		}
	})
	return p, root
}

// ownedWorkspace is a workspace owned by uid:gid, which sandboxd then
// runs as.
func ownedWorkspace(t *testing.T, uid, gid int) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, uid, gid); err != nil {
		t.Skipf("cannot chown the workspace (not root?): %v", err)
	}
	return ws
}

// TestCodegenProvision is the provider end to end on the real engine:
// an independent MCP client at the endpoint lists the tools and reads
// and writes the mounted workspace; a missing or wrong token is refused;
// the port is bound to 127.0.0.1; the container has only loopback, runs
// hardened as the workspace's owner; Release leaves no container and no
// private directory, and the workspace with what the agent wrote.
func TestCodegenProvision(t *testing.T) {
	image := codegenImage(t)
	p, root := newTestProvider(t)
	ws := ownedWorkspace(t, 1234, 1234)
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	name := uniqueName(t)
	ctx := context.Background()
	start := time.Now()
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image, "workspace": ws}})
	if err != nil {
		t.Fatal(err)
	}
	provisioned := time.Since(start)
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("provisioned in %v, first MCP answer (tools/list) %v after Provision was called", provisioned.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"Read", "Write", "Glob"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("tool %s missing from %v", want, names)
		}
	}
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "hello.txt"}); !strings.Contains(out, "from the host") {
		t.Errorf("Read: %q", out)
	}
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "agent.txt", "content": "from the agent\n"})
	if out := mcptest.CallText(t, cs, "Glob", map[string]any{"pattern": "*.txt"}); !strings.Contains(out, "agent.txt") {
		t.Errorf("Glob: %q", out)
	}
	fi, err := os.Stat(filepath.Join(ws, "agent.txt"))
	if err != nil {
		t.Fatalf("the agent's file is not in the workspace: %v", err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1234 {
		t.Errorf("the agent's file is owned by uid %d, want the workspace's owner 1234", st.Uid)
	}

	// The token: none, or a wrong one, is refused.
	for label, tok := range map[string]string{"no token": "", "wrong token": "x" + got.Token} {
		req, _ := http.NewRequest(http.MethodPost, got.Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Transport: mcptest.Bearer{Token: tok}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", label, resp.StatusCode)
		}
	}
	// Loopback only.
	u, _ := url.Parse(got.Endpoint)
	if host, _, _ := net.SplitHostPort(u.Host); host != "127.0.0.1" {
		t.Errorf("endpoint %s is not on 127.0.0.1", got.Endpoint)
	}
	if len(got.Token) < 43 {
		t.Errorf("token of %d characters, want 32 bytes in base64url", len(got.Token))
	}

	// The container: only loopback, hardened, labelled.
	id := got.Details["container"]
	if out := docker(t, "exec", id, "/bin/ls", "/sys/class/net"); strings.Fields(out)[0] != "lo" || len(strings.Fields(out)) != 1 {
		t.Errorf("network interfaces in the container: %q, want only lo", out)
	}
	insp := docker(t, "inspect", "--format", "{{.Config.User}} {{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.HostConfig.SecurityOpt}} {{.HostConfig.PidsLimit}} {{index .Config.Labels \""+LabelID+"\"}} {{.HostConfig.NetworkMode}}", id)
	if want := "1234:1234 true [ALL] [no-new-privileges] 1024 " + got.ID + " none"; insp != want {
		t.Errorf("container: %q, want %q", insp, want)
	}
	// /tmp runs what is built there (go test does), and the root is read-only.
	if out := docker(t, "exec", id, "/bin/sh", "-c", "cp /bin/busybox /tmp/busybox && /tmp/busybox echo ran; touch /ro 2>/dev/null || echo read-only"); out != "ran\nread-only" {
		t.Errorf("tmpfs exec / read-only root: %q", out)
	}
	if env := docker(t, "inspect", "--format", "{{.Config.Env}} {{.Config.Cmd}}", id); strings.Contains(env, got.Token) {
		t.Error("the token is in the container's environment or command line")
	}
	dir := got.Details["dir"]
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("private directory %s: %v, %v", dir, fi, err)
	}
	if !strings.HasPrefix(dir, root) {
		t.Errorf("private directory %s is not under %s", dir, root)
	}

	list, _ := p.List(ctx, plugin.ListOptions{})
	if len(list) != 1 || list[0].ID != got.ID || list[0].Token != "" {
		t.Errorf("List: %+v", list)
	}

	start = time.Now()
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("released in %v", time.Since(start).Round(time.Millisecond))
	if left := containersNamed(t, name); len(left) > 0 {
		t.Errorf("containers left after Release: %v", left)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("private directory left after Release: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "agent.txt")); err != nil || string(b) != "from the agent\n" {
		t.Errorf("the workspace lost the agent's file on Release: %q, %v", b, err)
	}
	if _, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		t.Error("the endpoint still accepts connections after Release")
	}
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); !errors.Is(err, plugin.ErrNotProvisioned) {
		t.Errorf("second Release: %v", err)
	}
}

// TestCodegenOwnWorkspace: without a workspace the provider makes an
// empty one, and removes it on Release, since it made it.
func TestCodegenOwnWorkspace(t *testing.T) {
	image := codegenImage(t)
	p, _ := newTestProvider(t)
	got, err := p.Provision(context.Background(), plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode, Config: map[string]any{"image": image}})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "x.txt", "content": "x\n"})
	if got.Details["workspace_by"] != "provider" {
		t.Errorf("details %v", got.Details)
	}
	if err := p.Release(context.Background(), got.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(got.Workspace); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the provider's own workspace survived Release: %v", err)
	}
}

// TestCodegenErrors: a missing image or workspace is KindStart naming
// it; an unreachable engine is KindTransport naming it; nothing is left.
func TestCodegenErrors(t *testing.T) {
	image := codegenImage(t)
	p, root := newTestProvider(t)
	ctx := context.Background()
	_, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "e", Mode: CodegenMode, Config: map[string]any{"image": "promptkit-test/no-such-image:0"}})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "promptkit-test/no-such-image:0 is not present locally") {
		t.Errorf("missing image: %v", err)
	}
	_, err = p.Provision(ctx, plugin.ProvisionSpec{Name: "e", Mode: CodegenMode, Config: map[string]any{"image": image, "workspace": "/nonexistent/ws"}})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "workspace /nonexistent/ws does not exist") {
		t.Errorf("missing workspace: %v", err)
	}
	if err := p.Check("e", map[string]any{"image": image, "idle_timeout": "-1s", "bogus": 1}); err == nil {
		t.Error("Check accepted a bad config")
	}

	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	down := NewCodegenProvider(DefaultHardening, nil)
	down.root = root
	defer down.Close()
	_, err = down.Provision(ctx, plugin.ProvisionSpec{Name: "e", Mode: CodegenMode, Config: map[string]any{"image": image}})
	if !errors.Is(err, sandbox.ErrTransport) || !strings.Contains(err.Error(), "unix:///nonexistent/docker.sock is unreachable") {
		t.Errorf("engine down: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("failed provisions left directories: %v", entries)
	}
}

// TestCodegenIdleReaped: a sandbox nothing connects to is released after
// its idle_timeout.
func TestCodegenIdleReaped(t *testing.T) {
	image := codegenImage(t)
	p, _ := newTestProvider(t)
	name := uniqueName(t)
	got, err := p.Provision(context.Background(), plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image, "idle_timeout": "2s"}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, _ := p.List(context.Background(), plugin.ListOptions{})
		if len(list) == 0 && len(containersNamed(t, name)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s not reaped 30s after an idle_timeout of 2s", got.ID)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := os.Stat(got.Details["dir"]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("private directory left after the reap: %v", err)
	}
}
