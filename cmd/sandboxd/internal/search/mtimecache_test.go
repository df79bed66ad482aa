package search

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// globOrder runs Glob("**") and returns the workspace-relative paths in
// the order it gave them.
func globOrder(t *testing.T, f *fixture) string {
	t.Helper()
	out, err := f.s.Glob(context.Background(), "**", "")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(out, f.dir+"/", "")
}

var cacheEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at sets name's mtime to minute m after cacheEpoch.
func at(t *testing.T, f *fixture, name string, m int) {
	t.Helper()
	ts := cacheEpoch.Add(time.Duration(m) * time.Minute)
	if err := os.Chtimes(filepath.Join(f.dir, name), ts, ts); err != nil {
		t.Fatal(err)
	}
}

// TestGlobSeesChangesAfterCaching: every way a file's time or identity
// can change between two Globs shows in the second one's order, though
// the first one cached every mtime.
func TestGlobSeesChangesAfterCaching(t *testing.T) {
	f := newFixture(t, map[string]string{"a": "a", "b": "b", "d/c": "c", "d/e": "e"}, Options{})
	for i, name := range []string{"a", "b", "d/c", "d/e"} {
		at(t, f, name, i)
	}
	if got := globOrder(t, f); got != "d/e\nd/c\nb\na" {
		t.Fatalf("first Glob:\n%s", got)
	}
	if n := len(f.s.mtimes.mtimes); n != 4 {
		t.Fatalf("%d mtimes cached, want 4", n)
	}
	steps := []struct {
		what   string
		change func()
		want   string
	}{
		{"touch (attributes only)", func() { at(t, f, "a", 10) }, "a\nd/e\nd/c\nb"},
		{"content written", func() {
			os.WriteFile(filepath.Join(f.dir, "b"), []byte("new"), 0o644)
			at(t, f, "b", 11) // the write's own time is now; pin it
		}, "b\na\nd/e\nd/c"},
		{"file renamed over another", func() {
			at(t, f, "d/c", 20)
			os.Rename(filepath.Join(f.dir, "d/c"), filepath.Join(f.dir, "a"))
		}, "a\nb\nd/e"},
		{"directory replaced by another with the same names", func() {
			os.Rename(filepath.Join(f.dir, "d"), filepath.Join(f.base, "d-old"))
			os.MkdirAll(filepath.Join(f.dir, "d"), 0o755)
			os.WriteFile(filepath.Join(f.dir, "d/e"), []byte("e2"), 0o644)
			at(t, f, "d/e", 30)
		}, "d/e\na\nb"},
		{"file deleted and made again", func() {
			os.Remove(filepath.Join(f.dir, "b"))
			os.WriteFile(filepath.Join(f.dir, "b"), []byte("b2"), 0o644)
			at(t, f, "b", 40)
		}, "b\nd/e\na"},
		{"times moved back", func() { at(t, f, "b", 1) }, "d/e\na\nb"},
	}
	for _, s := range steps {
		s.change()
		if got := globOrder(t, f); got != s.want {
			t.Fatalf("after %s:\n%s\nwant\n%s", s.what, got, s.want)
		}
	}
}

// TestGlobCacheOverflowForgetsAll: lost events (a queue overflow) make
// the cache forget everything.
func TestGlobCacheOverflowForgetsAll(t *testing.T) {
	f := newFixture(t, map[string]string{"a": "a"}, Options{})
	globOrder(t, f)
	c := f.s.mtimes
	if len(c.mtimes) != 1 {
		t.Fatalf("cached %d", len(c.mtimes))
	}
	ev := make([]byte, unix.SizeofInotifyEvent)
	binary.NativeEndian.PutUint32(ev[0:4], ^uint32(0)) // wd -1
	binary.NativeEndian.PutUint32(ev[4:8], unix.IN_Q_OVERFLOW)
	c.mu.Lock()
	c.watcher.apply(ev, c.apply)
	n := len(c.mtimes)
	c.mu.Unlock()
	if n != 0 {
		t.Fatalf("after an overflow %d mtimes remain", n)
	}
}

// TestGlobWithoutCache: concurrent Globs (only one uses the cache) and a
// closed cache give the same answers.
func TestGlobWithoutCache(t *testing.T) {
	f := newFixture(t, map[string]string{"a": "a", "b": "b", "c": "c"}, Options{})
	for i, name := range []string{"a", "b", "c"} {
		at(t, f, name, i)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := f.s.Glob(context.Background(), "*", "")
			if err != nil || strings.ReplaceAll(out, f.dir+"/", "") != "c\nb\na" {
				t.Errorf("concurrent Glob: %q, %v", out, err)
			}
		}()
	}
	wg.Wait()
	f.s.Close()
	at(t, f, "a", 9)
	if got := globOrder(t, f); got != "a\nc\nb" {
		t.Fatalf("after Close:\n%s", got)
	}
}
