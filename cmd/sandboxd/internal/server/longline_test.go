package server

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestGrepLongLineStaysSmall greps a 64 MiB file of one line over MCP:
// the match comes back as the line's first 2000 bytes and a mark, and
// sandboxd (this process) allocates a small fraction of the line to say
// so. Before the bound it held the whole line, and more in its copies.
// Not parallel: the allocation count is the whole process's.
func TestGrepLongLineStaysSmall(t *testing.T) {
	const size = 64 << 20
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	file := filepath.Join(d.dir, "one-line.min.js")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("needle")
	chunk := strings.Repeat("x", 1<<20)
	for n := len("needle"); n < size; n += len(chunk) {
		w.WriteString(chunk[:min(len(chunk), size-n)])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := ok(t, cs, "Grep", map[string]any{"pattern": "needle", "output_mode": "content"})
	runtime.ReadMemStats(&after)

	want := file + ":1:needle" + strings.Repeat("x", 2000-len("needle")) + " [... omitted end of long line]"
	if got != want {
		t.Errorf("Grep: %d bytes, starting %.80q, ending %q; want %d bytes ending %q",
			len(got), got, got[max(0, len(got)-40):], len(want), want[len(want)-40:])
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("Grep of a %d MiB line allocated %d KiB in sandboxd", size>>20, allocated>>10)
	if allocated > 16<<20 {
		t.Errorf("Grep of a %d MiB line allocated %d MiB in sandboxd; want under 16", size>>20, allocated>>20)
	}
	// The other modes never held lines.
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "needle", "output_mode": "count"}); got != file+":1" {
		t.Errorf("Grep count: %q", got)
	}
}
