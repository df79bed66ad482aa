package search

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// The Goroot benchmarks search $(go env GOROOT)/src; each *Ripgrep one runs
// rg alone on the same tree, so the difference is this package's cost.

const benchRegex = `func \(\w+ \*Reader\) Read`

func gorootSrc(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

func benchSearcher(b *testing.B) (*Searcher, string) {
	b.Helper()
	src := gorootSrc(b)
	ws, err := workspace.Open(src)
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { _ = ws.Close() })
	s, err := New(ws, Options{})
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s, src
}

func BenchmarkGlobGoroot(b *testing.B) {
	s, _ := benchSearcher(b)
	for b.Loop() {
		out, err := s.Glob(context.Background(), "**/*.go", "")
		if err != nil || !strings.Contains(out, "narrow the pattern") {
			b.Fatalf("%v: %.200s", err, out)
		}
	}
}

func BenchmarkGlobGorootRipgrep(b *testing.B) {
	s, src := benchSearcher(b)
	for b.Loop() {
		cmd := exec.Command(s.rg, "--files", "-g", "*.go", src)
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

func benchGrepRequest() GrepRequest {
	return GrepRequest{Pattern: benchRegex, OutputMode: modeContent, LineNumbers: true}
}

func BenchmarkGrepGoroot(b *testing.B) {
	s, _ := benchSearcher(b)
	for b.Loop() {
		out, err := s.Grep(context.Background(), benchGrepRequest())
		if err != nil || !strings.Contains(out, "bufio.go") {
			b.Fatalf("%v: %.200s", err, out)
		}
	}
}

// BenchmarkGrepGorootRipgrep runs rg with the very arguments Grep gives it.
func BenchmarkGrepGorootRipgrep(b *testing.B) {
	s, _ := benchSearcher(b)
	argv, err := s.RipgrepCommand(benchGrepRequest())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if out, err := exec.Command(argv[0], argv[1:]...).Output(); err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}
