package sandboxdimage

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
)

// BenchmarkFirstRunTests times what an agent meets first in a fresh
// container: docker run, MCP initialize, the module written, and the
// first run_tests answered. "seeded" is the image as it is; "cold" the
// same image with the seed turned off (SANDBOXD_GOCACHE_SEED empty), as
// images before it were: the standard library compiled on the spot.
//
//	go test -run '^$' -bench FirstRunTests -count 5 ./internal/sandboxdimage/
func BenchmarkFirstRunTests(b *testing.B) {
	for _, bc := range []struct {
		name string
		env  []string
	}{
		{"cold", []string{"-e", "SANDBOXD_GOCACHE_SEED="}},
		{"seeded", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ref := benchImage(b)
			for b.Loop() {
				firstRunTests(b, ref, bc.env)
			}
		})
	}
}

func benchImage(b *testing.B) string {
	b.Helper()
	dockertest.Require(b)
	ctx, cancel := context.WithTimeout(context.Background(), ensureTimeout)
	defer cancel()
	res, err := Ensure(ctx, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return res.Ref
}

func firstRunTests(b *testing.B, ref string, env []string) {
	_, run := workspace(b)
	cs := stdioSandbox(b, ref, run, env, "warn", io.Discard)
	defer cs.Close() // each iteration's container ends with it
	for name, content := range map[string]string{
		"go.mod":       "module example.com/tiny\n\ngo 1.24\n",
		"tiny.go":      "package tiny\n\nimport \"fmt\"\n\n// Hello greets.\nfunc Hello(name string) string { return fmt.Sprintf(\"hello, %s\", name) }\n",
		"tiny_test.go": "package tiny\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {\n\tif Hello(\"x\") != \"hello, x\" {\n\t\tt.Fatal(Hello(\"x\"))\n\t}\n}\n",
	} {
		mcptest.CallText(b, cs, "Write", map[string]any{"file_path": name, "content": content})
	}
	if got := mcptest.CallText(b, cs, "run_tests", map[string]any{}); !strings.Contains(got, "1 passed, 0 failed") {
		b.Fatalf("run_tests: %q", got)
	}
}
