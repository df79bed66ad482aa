package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/hooks"
)

// TestSandboxesOfOneConfigOpenTogether: three sandboxes whose backend
// never answers Open (as an engine that accepts and never replies) fail
// after one open timeout in all, not one each.
func TestSandboxesOfOneConfigOpenTogether(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, filepath.Join(dir, "plugins"), "promptkit-sandbox-test_v1.0.0")
	var b strings.Builder
	b.WriteString("apiVersion: promptkit.altairalabs.ai/v1alpha1\nkind: RuntimeConfig\nspec:\n  sandboxes:\n")
	for _, name := range []string{"a", "b", "c"} {
		b.WriteString("    " + name + ":\n      mode: test_stuck\n      open_timeout: 3s\n")
	}
	b.WriteString("  hooks:\n    h:\n      command: x\n      hook: provider\n      phases: [before_call]\n      sandbox: a\n")
	cfg := filepath.Join(dir, "runtime.yaml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var h *Host
	opts := hooks.Options{Plugins: func(string, []string) (hooks.Plugins, error) {
		var err error
		h, err = New(Options{Dirs: []string{filepath.Join(dir, "plugins")}, Env: emptyEnv(t), CacheDir: t.TempDir()})
		return h, err
	}}
	start := time.Now()
	rt, err := hooks.Load(cfg, opts)
	took := time.Since(start)
	if rt != nil {
		t.Fatal("Load opened sandboxes whose backend never answers")
	}
	var ce *config.Error
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Fatalf("Load: %v, want three problems", err)
	}
	for i, name := range []string{"a", "b", "c"} {
		want := "open sandbox " + name + " in plugin test 1.0.0 (" + filepath.Join(dir, "plugins", "promptkit-sandbox-test_v1.0.0") + "): no answer within 3s (open_timeout)"
		if got := ce.Problems[i].Msg; !strings.Contains(got, want) {
			t.Errorf("problem %d: %q, want it to say %q", i, got, want)
		}
	}
	// One after another they would take 9 s.
	if took > 5500*time.Millisecond {
		t.Errorf("Load took %v, want about one open timeout (3s)", took.Round(time.Millisecond))
	}
}
