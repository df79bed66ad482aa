package sandboxdimage

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
)

// watchedLog is a test log that also says when a line holding a given
// text has been written.
type watchedLog struct {
	t    *testing.T
	want string
	mu   sync.Mutex
	seen chan struct{}
}

func (l *watchedLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.Contains(string(p), l.want) && l.seen != nil {
		close(l.seen)
		l.seen = nil
	}
	return len(p), nil
}

// TestGoToolsInside: in the container, the LSP tools work on a Go module
// (gopls is in the image), and the standard library comes compiled: once
// sandboxd has copied the image's seed into GOCACHE, building all of std
// compiles nothing, and the module's first run_tests compiles the module
// alone.
func TestGoToolsInside(t *testing.T) {
	ref := image(t)
	_, run := workspace(t)
	seeded := make(chan struct{})
	cs := stdioSandbox(t, ref, run, nil, "info", &watchedLog{t: t, want: "seeded the Go build cache", seen: seeded})
	select {
	case <-seeded:
	case <-time.After(2 * time.Minute):
		t.Fatal("sandboxd did not say it seeded the Go build cache")
	}

	for name, content := range map[string]string{
		"go.mod":    "module example.com/shapes\n\ngo 1.24\n",
		"area.go":   "package shapes\n\n// Area is a rectangle's area.\nfunc Area(w, h int) int { return w * h }\n",
		"double.go": "package shapes\n\n// Double doubles a rectangle's area.\nfunc Double(w, h int) int { return 2 * Area(w, h) }\n",
		"area_test.go": "package shapes\n\nimport \"testing\"\n\nfunc TestArea(t *testing.T) {\n\tif Area(2, 3) != 6 {\n\t\tt.Fatal(\"2x3\")\n\t}\n}\n\n" +
			"func TestDouble(t *testing.T) {\n\tif Double(2, 3) != 13 {\n\t\tt.Fatal(\"double 2x3\")\n\t}\n}\n",
	} {
		mcptest.CallText(t, cs, "Write", map[string]any{"file_path": name, "content": content})
	}
	if got := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "go build -x std 2>&1 | grep -c /compile || true"}); strings.TrimSpace(got) != "0" {
		t.Errorf("compiles of the standard library on the seeded cache: %q, want 0", got)
	}
	if got := mcptest.CallText(t, cs, "run_tests", map[string]any{}); !strings.Contains(got, "1 passed, 1 failed") {
		t.Errorf("run_tests: %q", got)
	}
	if got := mcptest.CallText(t, cs, "find_definition", map[string]any{"symbol": "Area", "file_path": "double.go"}); !strings.Contains(got, "area.go:4") {
		t.Errorf("find_definition: %q", got)
	}
	if got := mcptest.CallText(t, cs, "find_references", map[string]any{"symbol": "Area", "file_path": "area.go"}); !strings.Contains(got, "double.go:4") || !strings.Contains(got, "area_test.go:6") {
		t.Errorf("find_references: %q", got)
	}
	mcptest.CallText(t, cs, "rename_symbol", map[string]any{"symbol": "Area", "file_path": "area.go", "new_name": "RectArea"})
	if got := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "grep -c RectArea area.go double.go area_test.go"}); got != "area.go:2\ndouble.go:1\narea_test.go:1\n" && strings.TrimSpace(got) != "area.go:2\ndouble.go:1\narea_test.go:1" {
		t.Errorf("after rename_symbol: %q", got)
	}
}
