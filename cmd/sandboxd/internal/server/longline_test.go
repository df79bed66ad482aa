package server

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// TestGrepLongLineStaysSmall greps a 64 MiB file of one line over MCP:
// the match comes back as the line's first 2000 bytes and a mark, and
// sandboxd (this process) never holds more than a small fraction of the
// line. Before the bound it held the whole line, and more in its copies.
// The line is scrubbed to vet the match (a line holding a secret never
// matches), a window at a time, so what is allocated in all grows with
// the line, but what is live at once does not.
// Not parallel: the heap measured is the whole process's.
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
	peak := watchHeap()
	got := ok(t, cs, "Grep", map[string]any{"pattern": "needle", "output_mode": "content"})
	grew := peak()
	runtime.ReadMemStats(&after)

	want := file + ":1:needle" + strings.Repeat("x", 2000-len("needle")) + " [... omitted end of long line]"
	if got != want {
		t.Errorf("Grep: %d bytes, starting %.80q, ending %q; want %d bytes ending %q",
			len(got), got, got[max(0, len(got)-40):], len(want), want[len(want)-40:])
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("Grep of a %d MiB line allocated %d KiB in sandboxd, the heap grew by at most %d KiB", size>>20, allocated>>10, grew>>10)
	if grew > 16<<20 {
		t.Errorf("Grep of a %d MiB line grew the heap by %d MiB in sandboxd; want under 16", size>>20, grew>>20)
	}
	if allocated > 3*size {
		t.Errorf("Grep of a %d MiB line allocated %d MiB in sandboxd; want under %d", size>>20, allocated>>20, 3*size>>20)
	}
	// The other modes never held lines.
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "needle", "output_mode": "count"}); got != file+":1" {
		t.Errorf("Grep count: %q", got)
	}
}

// watchHeap samples the live heap (objects not yet swept included) until
// the function it returns is called, which returns the largest growth
// seen over the heap at the start.
func watchHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		top := base
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			top = max(top, read())
			select {
			case <-stop:
				done <- top - base
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		return <-done
	}
}
