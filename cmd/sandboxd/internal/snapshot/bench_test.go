package snapshot

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// benchWorkspace is 10,000 small files in 100 directories, with one
// snapshot of them taken.
func benchWorkspace(b *testing.B) (string, *Store) {
	b.Helper()
	needGit(b)
	ws := b.TempDir()
	for i := range 10_000 {
		write(b, ws, filepath.Join(fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.txt", i)), fmt.Sprintf("file %d\n", i), 0o644)
	}
	s, err := Open(b.TempDir(), ws, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Create(context.Background(), "base", ""); err != nil {
		b.Fatal(err)
	}
	return ws, s
}

// touchFew changes five files, adds one and removes one.
func touchFew(b *testing.B, ws string, n int) {
	b.Helper()
	for j := range 5 {
		write(b, ws, filepath.Join(fmt.Sprintf("d%02d", j), fmt.Sprintf("f%05d.txt", j)), fmt.Sprintf("changed %d %d\n", n, j), 0o644)
	}
	write(b, ws, fmt.Sprintf("new/%d.txt", n), "new\n", 0o644)
}

// BenchmarkCreateIncremental is a snapshot of a 10,000-file workspace
// that has one already, after a few files changed.
func BenchmarkCreateIncremental(b *testing.B) {
	ws, s := benchWorkspace(b)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		touchFew(b, ws, n)
		b.StartTimer()
		if _, err := s.Create(ctx, fmt.Sprintf("s%d", n), ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestore restores a 10,000-file workspace, a few of its files
// changed, to its first snapshot; the automatic snapshot a restore takes
// first is part of it.
func BenchmarkRestore(b *testing.B) {
	ws, s := benchWorkspace(b)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		touchFew(b, ws, n)
		b.StartTimer()
		r, err := s.Restore(ctx, "base")
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Changes) != 6 || len(r.Failed) != 0 {
			b.Fatalf("restore changed %d files (want 6), failed %v", len(r.Changes), r.Failed)
		}
	}
}
