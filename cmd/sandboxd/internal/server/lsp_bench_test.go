package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkFindReferences asks a warm gopls for the references of
// net/http's Header, from header.go, over MCP: the standard library in
// place (GOROOT/src is the std module), which the benchmark only reads.
func BenchmarkFindReferences(b *testing.B) {
	env := lspEnv(b, "gopls", goplsInstall)
	for i, kv := range env {
		switch {
		case strings.HasPrefix(kv, "GOFLAGS="):
			env[i] = "GOFLAGS=" // std vendors its dependencies
		case strings.HasPrefix(kv, "HOME="):
			// gopls's own cache (under HOME) is kept across the runs of
			// -count: the measure is of a warm server, not a cold cache.
			if home, err := os.UserHomeDir(); err == nil {
				env[i] = "HOME=" + home
			}
		}
	}
	dir := filepath.Join(goEnv(b, "GOROOT"), "src", "net", "http")
	if _, err := os.Stat(filepath.Join(dir, "header.go")); err != nil {
		b.Fatalf("no net/http source in GOROOT: %v", err)
	}
	d := startDaemon(b, Config{Workspaces: []Workspace{{Dir: dir}}, Env: env, ReadOnly: true})
	cs := d.connect(b, streamable)
	args := map[string]any{"symbol": "Header", "file_path": "header.go"}
	// A cold gopls loads and checks the package's importers first, which
	// on two shared cores can outlast one call's timeout: it goes on
	// loading, and a later call gets the answer.
	var first string
	warm := time.Now()
	for try := 0; ; try++ {
		r := call(b, cs, "find_references", args)
		if !r.IsError {
			first = r.Text
			break
		}
		if try == 4 || !strings.Contains(r.Text, "did not answer within") {
			b.Fatalf("find_references: %s", r.Text)
		}
	}
	if !strings.Contains(first, "header.go:") || !strings.Contains(first, "references to Header") {
		b.Fatalf("find_references = %s", first)
	}
	b.Logf("%s (the first answer took %s)", first[:strings.IndexByte(first, '\n')], time.Since(warm).Round(time.Millisecond))
	// Warm means done: gopls goes on checking the workspace after its
	// first answer, and on two shared cores that work, not the question,
	// would be measured.
	waitIdle(b, d.srv.spaces[""].lsp.Running()["go"])
	b.ResetTimer()
	for b.Loop() {
		ok(b, cs, "find_references", args)
	}
}

// waitIdle waits until process pid has used under 50 ms of CPU in a
// second, or for three minutes.
func waitIdle(b *testing.B, pid int) {
	b.Helper()
	cpu := func() int {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Fatalf("gopls: %v", err)
		}
		// utime and stime are fields 14 and 15; the command name before
		// them is in parentheses and may hold spaces.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
		u, _ := strconv.Atoi(f[11])
		s, _ := strconv.Atoi(f[12])
		return u + s // in clock ticks, 100 a second
	}
	start := time.Now()
	for last := cpu(); time.Since(start) < 3*time.Minute; {
		time.Sleep(time.Second)
		now := cpu()
		if now-last < 5 {
			break
		}
		last = now
	}
	b.Logf("gopls idle after %s more", time.Since(start).Round(time.Second))
}
