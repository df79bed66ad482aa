package search

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
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
	return benchSearcherWith(b, Options{})
}

// benchSearcherWith is benchSearcher with opts; a Credential needs root.
func benchSearcherWith(b *testing.B, opts Options) (*Searcher, string) {
	b.Helper()
	if opts.Credential != nil {
		proctest.RequireRoot(b)
	}
	src := gorootSrc(b)
	ws, err := workspace.Open(src)
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { _ = ws.Close() })
	s, err := New(ws, opts)
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s, src
}

func BenchmarkGlobGoroot(b *testing.B) {
	benchGlob(b, Options{})
}

// BenchmarkGlobGorootAsCredential is Glob with rg run as another user
// (sandboxd --run-as), started directly with the credential.
func BenchmarkGlobGorootAsCredential(b *testing.B) {
	benchGlob(b, Options{Credential: nobody})
}

func benchGlob(b *testing.B, opts Options) {
	s, _ := benchSearcherWith(b, opts)
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
	benchGrep(b, Options{})
}

// BenchmarkGrepGorootAsCredential is Grep with rg run as another user
// (sandboxd --run-as), started directly with the credential.
func BenchmarkGrepGorootAsCredential(b *testing.B) {
	benchGrep(b, Options{Credential: nobody})
}

func benchGrep(b *testing.B, opts Options) {
	s, _ := benchSearcherWith(b, opts)
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
