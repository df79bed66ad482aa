package kubecodegen

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// TestPauseResumeOnTheRealCluster: a paused sandbox on a workspace
// volume has no Pod, and keeps its other objects and its claim; a call
// then gets 409 and a message naming the state and how to resume, at
// once, and an MCP client's connect fails with it; List says paused. Resume
// starts a new Pod behind the same endpoint and token, and the files are
// the same. A sandbox on an emptyDir cannot pause, and says why. Release
// of a paused sandbox (with Purge) leaves nothing.
func TestPauseResumeOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	s := newVolumeSetup(ctx, t, p, 1)
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: s.cfg, WorkspaceVolume: "paused"})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "kept.txt", "content": "before the pause\n"})
	pods := s.k.Client.CoreV1().Pods(s.ns)
	before, err := pods.Get(ctx, got.Details["pod"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := p.Pause(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	t.Logf("Pause (the Pod deleted and gone) took %v", time.Since(start).Round(time.Millisecond))
	if _, err := pods.Get(ctx, got.Details["pod"], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Pod while paused: %v, want it gone", err)
	}
	if left := objectsOf(t, s.k, s.ns, got.ID); len(left) != 4 || strings.Contains(strings.Join(left, " "), "pod/") {
		t.Errorf("objects while paused: %v, want all but the Pod", left)
	}
	if s.claimOf(t, "paused") == nil {
		t.Fatal("the claim went with the Pod")
	}
	if err := p.Pause(ctx, got.ID); err != nil {
		t.Errorf("pausing a paused sandbox: %v", err)
	}
	start = time.Now()
	req, _ := http.NewRequest(http.MethodPost, got.Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+got.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "is paused") || !strings.Contains(string(body), "codegen resume "+got.ID) {
		t.Errorf("a call while paused: %d %q", resp.StatusCode, body)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the refusal took %v", took)
	}
	// The session ended with its Pod (its stream broke); a client that
	// connects while paused is told why it cannot.
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = mcp.NewClient(&mcp.Implementation{Name: "codegen-test", Version: "0"}, nil).Connect(cctx, &mcp.StreamableClientTransport{
		Endpoint: got.Endpoint, HTTPClient: &http.Client{Transport: mcptest.Bearer{Token: got.Token}}, MaxRetries: -1,
	}, nil)
	ccancel()
	if err == nil || !strings.Contains(err.Error(), "is paused") {
		t.Errorf("an MCP client connecting while paused: %v, want the reason", err)
	} else {
		t.Logf("an MCP client connecting while paused: %v", err)
	}
	if list, _ := p.List(ctx, plugin.ListOptions{Usage: true}); len(list) != 1 || list[0].Details[provision.State] != provision.StatePaused {
		t.Errorf("List while paused: %+v", list)
	}
	if id, found := volumeOn(t, p, "paused"); id != got.ID {
		t.Errorf("Volumes while paused: attached to %q (listed %v), want %s", id, found, got.ID)
	}

	start = time.Now()
	if err := p.Resume(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	t.Logf("Resume (a new Pod, up to its MCP initialize answering) took %v", time.Since(start).Round(time.Millisecond))
	after, err := pods.Get(ctx, got.Details["pod"], metav1.GetOptions{})
	if err != nil || after.UID == before.UID {
		t.Errorf("the Pod after Resume: %v, want a new one", err)
	}
	again := mcptest.Connect(t, got.Endpoint, got.Token)
	if out := mcptest.CallText(t, again, "Read", map[string]any{"file_path": "kept.txt"}); !strings.Contains(out, "before the pause") {
		t.Errorf("Read after Resume: %q", out)
	}
	if list, _ := p.List(ctx, plugin.ListOptions{}); len(list) != 1 || list[0].Details[provision.State] != provision.StateRunning {
		t.Errorf("List after Resume: %+v", list)
	}
	if err := p.Resume(ctx, got.ID); err != nil {
		t.Errorf("resuming a running sandbox: %v", err)
	}

	// An emptyDir would go with the Pod: such a sandbox cannot pause,
	// and goes on answering.
	plain, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: s.cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Pause(ctx, plain.ID); !errors.Is(err, ErrEmptyDirPause) || !errors.Is(err, plugin.ErrCannotPause) {
		t.Errorf("pausing a sandbox on an emptyDir: %v, want ErrEmptyDirPause, a plugin.ErrCannotPause", err)
	}
	if out := mcptest.CallText(t, mcptest.Connect(t, plain.Endpoint, plain.Token), "Bash", map[string]any{"command": "echo alive"}); strings.TrimSpace(out) != "alive" {
		t.Errorf("the sandbox whose pause was refused: %q", out)
	}
	if err := p.Release(ctx, plain.ID, plugin.ReleaseOptions{}); err != nil {
		t.Error(err)
	}

	if err := p.Pause(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if left := objectsOf(t, s.k, s.ns, ""); len(left) > 0 {
		t.Errorf("left after releasing the paused sandbox: %v", left)
	}
	if c := s.claimOf(t, "paused"); c != nil {
		t.Errorf("the claim after a Release with Purge: %+v", c)
	}
}

// TestSleepWhenIdleOnTheRealCluster: with on_idle: pause, a sandbox on
// a workspace volume that nothing is connected to past its idle_timeout
// has its Pod deleted and is listed paused, not released; the next MCP
// client just connects: its first request starts a new Pod and goes
// through, and the files are there. A sandbox on an emptyDir is released
// when idle, as its files would go with its Pod.
func TestSleepWhenIdleOnTheRealCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	s := newVolumeSetup(ctx, t, p, 1)
	cfg := maps.Clone(s.cfg)
	cfg["idle_timeout"], cfg["on_idle"] = "2s", "pause"
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: cfg, WorkspaceVolume: "napping"})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "kept.txt", "content": "before the nap\n"})
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	// Idle is no connection at all: the client's kept-alive ones go too.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	deadline := time.Now().Add(time.Minute)
	for {
		list, _ := p.List(ctx, plugin.ListOptions{})
		states := map[string]string{}
		for _, sb := range list {
			states[sb.ID] = sb.Details[provision.State]
		}
		if states[got.ID] == provision.StatePaused && states[plain.ID] == "" {
			break
		}
		if states[got.ID] == "" {
			t.Fatalf("the sandbox on a volume was released when idle: %v", states)
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after going idle: %v; want %s paused and %s released", states, got.ID, plain.ID)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Listed paused once its Pod's deletion is accepted; the Pod goes
	// when its containers have stopped, within goneTimeout.
	for gone := time.Now().Add(goneTimeout); ; time.Sleep(200 * time.Millisecond) {
		_, err := s.k.Client.CoreV1().Pods(s.ns).Get(ctx, got.Details["pod"], metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(gone) {
			t.Fatalf("the Pod %s after sleeping when idle: %v, want it gone within %s", got.Details["pod"], err, goneTimeout)
		}
	}
	start := time.Now()
	again := mcptest.Connect(t, got.Endpoint, got.Token)
	if out := mcptest.CallText(t, again, "Read", map[string]any{"file_path": "kept.txt"}); !strings.Contains(out, "before the nap") {
		t.Errorf("Read after the wake: %q", out)
	}
	t.Logf("a new client's first answer from a sandbox paused while idle: %v", time.Since(start).Round(time.Millisecond))
	if list, _ := p.List(ctx, plugin.ListOptions{}); len(list) != 1 || list[0].Details[provision.State] != provision.StateRunning {
		t.Errorf("List after the wake: %+v", list)
	}
	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if left := objectsOf(t, s.k, s.ns, ""); len(left) > 0 {
		t.Errorf("left after the release: %v", left)
	}
}
