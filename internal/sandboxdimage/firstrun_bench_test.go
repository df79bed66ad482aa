package sandboxdimage

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/langfixture"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
)

// BenchmarkFirstRunTests times what an agent meets first in a fresh
// container: docker run, MCP initialize, the module written, and the
// first run_tests answered, on the Go fixture module (langfixture). "seeded" is the image as it is; "cold" the
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
			var call time.Duration
			for b.Loop() {
				call += firstRunTests(b, ref, bc.env)
			}
			// The run_tests call alone, what an MCP client's per-call
			// cap (PromptKit's 30 s) applies to.
			b.ReportMetric(call.Seconds()/float64(b.N), "run_tests-s/op")
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

// firstRunTests returns how long the run_tests call itself took.
func firstRunTests(b *testing.B, ref string, env []string) time.Duration {
	_, run := workspace(b)
	cs := stdioSandbox(b, ref, run, env, "warn", io.Discard)
	defer cs.Close() // each iteration's container ends with it
	fx, _ := langfixture.Get(codegenimage.Go)
	fx.WriteThrough(b, cs)
	want := fmt.Sprintf("%d passed, %d failed", fx.Passed, fx.Failed)
	start := time.Now()
	got := mcptest.CallText(b, cs, "run_tests", map[string]any{})
	took := time.Since(start)
	if !strings.Contains(got, want) {
		b.Fatalf("run_tests: %q, want %q", got, want)
	}
	return took
}

// BenchmarkEnsureUpToDate times what make sandboxd-image and every image
// test pay when the image is already built: building sandboxd (a no-op
// link check), hashing the inputs and asking the engine for the labels.
// A cold build is minutes, timed by make (see docs/sandboxd.md).
//
//	go test -run '^$' -bench EnsureUpToDate -count 5 ./internal/sandboxdimage/
func BenchmarkEnsureUpToDate(b *testing.B) {
	benchImage(b) // built once, outside the timing
	ctx := context.Background()
	for b.Loop() {
		res, err := Ensure(ctx, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Built {
			b.Fatal("an up-to-date image was built again")
		}
	}
}
