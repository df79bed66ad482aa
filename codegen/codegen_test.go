package codegen

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/hooks/config"
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
	if _, err := Up(context.Background(), cfg, "code", opts); !errors.As(err, &ce) || !strings.Contains(err.Error(), "nowhere_codegen") {
		t.Errorf("unknown mode: %v", err)
	}
}
