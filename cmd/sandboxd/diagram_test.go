package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestD2RendersThroughTheHelper: the built sandboxd renders D2 with the
// sandboxd-diagram next to it.
func TestD2RendersThroughTheHelper(t *testing.T) {
	cs := startHTTP(t, "--workspace", t.TempDir(), "--readonly").connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "render_diagram", Arguments: map[string]any{"language": "d2", "source": "a -> b: hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("render_diagram failed: %s", textOf(res))
	}
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			if img.MIMEType != "image/svg+xml" || !bytes.Contains(img.Data, []byte("<svg")) || !bytes.Contains(img.Data, []byte("hello")) {
				t.Errorf("image %s: %.200s", img.MIMEType, img.Data)
			}
			return
		}
	}
	t.Fatalf("no image in the result: %s", textOf(res))
}

// TestDaemonLinksNoD2: what only render_diagram's D2 needs stays in
// sandboxd-diagram; its package initialisers cost sandboxd's every
// start tens of milliseconds (issue 34).
func TestDaemonLinksNoD2(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{"oss.terrastruct.com/", "github.com/alecthomas/chroma", "github.com/yuin/goldmark", "github.com/dop251/goja",
			"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram/d2render"} {
			if strings.HasPrefix(dep, heavy) {
				t.Errorf("sandboxd links %s", dep)
			}
		}
	}
}
