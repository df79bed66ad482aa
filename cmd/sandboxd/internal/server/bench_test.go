package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The benchmarks call sandboxd over MCP Streamable HTTP on loopback with
// the official Go SDK client; each has a baseline that does the same work
// without sandboxd, measured in the same run, so compare the ratio:
//
//	go test -run '^$' -bench . -count 5 ./cmd/sandboxd/internal/server/

// benchRegex is a fixed regex with a few dozen matches in GOROOT/src.
const benchRegex = `func \(\w+ \*Reader\) Read`

func gorootSrc(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatalf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

func gorootDaemon(b *testing.B) *daemon {
	return startDaemon(b, Config{Workspaces: []Workspace{{Dir: gorootSrc(b)}}})
}

// benchGrep is the Grep call both Grep benchmarks make.
var benchGrep = map[string]any{"pattern": benchRegex, "output_mode": "content"}

func BenchmarkGrepGoroot(b *testing.B) {
	d := gorootDaemon(b)
	cs := d.connect(b, streamable)
	ok(b, cs, "Grep", benchGrep) // untimed: whichever runs first would pay for a cold page cache
	for b.Loop() {
		if out := ok(b, cs, "Grep", benchGrep); !strings.Contains(out, "bufio.go") {
			b.Fatalf("%.300s", out)
		}
	}
}

// BenchmarkGrepGorootRipgrep runs rg alone with the command line Grep
// runs for the same call.
func BenchmarkGrepGorootRipgrep(b *testing.B) {
	d := gorootDaemon(b)
	g := decodeArgs[grepArgs](b, d.srv, "Grep", benchGrep)
	argv, err := d.srv.spaces[""].search.RipgrepCommand(g.request())
	if err != nil {
		b.Fatal(err)
	}
	_ = exec.Command(argv[0], argv[1:]...).Run() // untimed, as in BenchmarkGrepGoroot
	for b.Loop() {
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil || !strings.Contains(string(out), "bufio.go") {
			b.Fatal(err)
		}
	}
}

func BenchmarkGlobGoroot(b *testing.B) {
	d := gorootDaemon(b)
	cs := d.connect(b, streamable)
	for b.Loop() {
		if out := ok(b, cs, "Glob", map[string]any{"pattern": "**/*.go"}); !strings.Contains(out, ".go") {
			b.Fatalf("%.300s", out)
		}
	}
}

func BenchmarkGlobGorootRipgrep(b *testing.B) {
	src := gorootSrc(b)
	for b.Loop() {
		if out, err := exec.Command("rg", "--files", "-g", "*.go", src).Output(); err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkBashTrue(b *testing.B) {
	d := startDaemon(b, Config{})
	cs := d.connect(b, streamable)
	for b.Loop() {
		if out := ok(b, cs, "Bash", map[string]any{"command": "true"}); out != "" {
			b.Fatalf("%q", out)
		}
	}
}

func BenchmarkShTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadLarge(b *testing.B) {
	d := startDaemon(b, Config{})
	var text strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&text, "line %4d: the quick brown fox jumps over the lazy dog, again and again\n", i+1)
	}
	if err := os.WriteFile(filepath.Join(d.dir, "large.txt"), []byte(text.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	cs := d.connect(b, streamable)
	for b.Loop() {
		if out := ok(b, cs, "Read", map[string]any{"file_path": "large.txt"}); !strings.Contains(out, "  2000\tline 2000") {
			b.Fatalf("%.300s", out[len(out)-300:])
		}
	}
}

// BenchmarkRead reads the first 2,000 lines of a real source file,
// GOROOT/src/net/http/server.go, over MCP: the agent's commonest call,
// scrubbed like every answer.
func BenchmarkRead(b *testing.B) {
	src := gorootSrc(b)
	d := startDaemon(b, Config{Workspaces: []Workspace{{Dir: filepath.Join(src, "net", "http")}}})
	cs := d.connect(b, streamable)
	for b.Loop() {
		if out := ok(b, cs, "Read", map[string]any{"file_path": "server.go"}); !strings.Contains(out, "  2000\t") {
			b.Fatalf("%.300s", out)
		}
	}
}
