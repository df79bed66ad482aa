package codegen

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
)

func TestMCPConfig(t *testing.T) {
	b, err := MCPConfig("code", plugin.Provisioned{Endpoint: "http://127.0.0.1:1234/mcp", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	s := got.MCPServers["code"]
	if s.Type != "http" || s.URL != "http://127.0.0.1:1234/mcp" || s.Headers["Authorization"] != "Bearer tok" {
		t.Errorf("%s", b)
	}
}

// TestUpErrors: a sandbox the config does not declare is a config error
// naming the ones it does; a mode no plugin serves is the loader's
// problem; nothing is started.
func TestUpErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "runtime.yaml")
	if err := os.WriteFile(cfg, []byte("spec:\n  sandboxes:\n    box: {mode: direct}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{Host: host.Options{Dirs: []string{dir}, NoCache: true}}
	_, err := Up(context.Background(), cfg, "code", opts)
	var ce *config.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `no sandbox named "code" (sandboxes: box)`) {
		t.Errorf("undeclared sandbox: %v", err)
	}
	if err := os.WriteFile(cfg, []byte("spec:\n  sandboxes:\n    code: {mode: nowhere_codegen}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The host is the config's ModeSet, so its hint ends the message.
	if _, err := Up(context.Background(), cfg, "code", opts); !errors.As(err, &ce) ||
		!strings.Contains(err.Error(), "nowhere_codegen") || !strings.Contains(err.Error(), "plugin directories searched: "+dir) {
		t.Errorf("unknown mode: %v", err)
	}
}

// TestReleaseOfASandboxGone: a sandbox the host does not hold (reaped
// idle, or never provisioned through it) releases without error, while
// the host itself says plugin.ErrNotProvisioned.
func TestReleaseOfASandboxGone(t *testing.T) {
	h, err := host.New(host.Options{Dirs: []string{t.TempDir()}, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if err := h.Release(context.Background(), "gone", plugin.ReleaseOptions{}); !errors.Is(err, plugin.ErrNotProvisioned) {
		t.Fatalf("host.Release: %v, want plugin.ErrNotProvisioned", err)
	}
	if err := Release(context.Background(), h, "gone"); err != nil {
		t.Errorf("Release: %v, want nil", err)
	}
}
