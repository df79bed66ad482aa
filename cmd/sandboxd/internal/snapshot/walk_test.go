package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWalkNeverReusesAChangedFile: a file rewritten with content of the
// same size and its modification time set back is read again (its
// change time moved), whether it was read just now or long enough ago
// for its blob to be reused.
func TestWalkNeverReusesAChangedFile(t *testing.T) {
	ws, s := fixture(t)
	ctx := context.Background()
	p := filepath.Join(ws, "same-size.txt")
	old := time.Now().Add(-time.Hour)
	for i, content := range []string{"first\n", "secnd\n", "third\n"} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			// Past the racy window, so the last read's blob is cached.
			time.Sleep(racyWindow + 100*time.Millisecond)
		}
		name := []string{"a", "b", "c"}[i]
		if _, err := s.Create(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
		got, err := s.git.run(ctx, nil, "cat-file", "blob", "refs/snapshots/"+name+":same-size.txt")
		if err != nil || string(got) != content {
			t.Fatalf("snapshot %s holds %q (%v), want %q", name, got, err, content)
		}
	}
	// Unchanged since, and cached: the blob is reused and still right.
	if _, err := s.Create(ctx, "d", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.git.run(ctx, nil, "cat-file", "blob", "refs/snapshots/d:same-size.txt"); string(got) != "third\n" {
		t.Errorf("snapshot d holds %q", got)
	}
	// Changed after its blob was cached: read again.
	if err := os.WriteFile(p, []byte("forth\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "e", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.git.run(ctx, nil, "cat-file", "blob", "refs/snapshots/e:same-size.txt"); string(got) != "forth\n" {
		t.Errorf("snapshot e holds %q, want the content written after the cached read", got)
	}
}

// TestWalkSkipsWhatGitRefuses: a symlink named .gitmodules (any case)
// is skipped and named, and the rest of the snapshot is taken.
func TestWalkSkipsWhatGitRefuses(t *testing.T) {
	ws, s := fixture(t)
	if err := os.Symlink("elsewhere", filepath.Join(ws, ".GitModules")); err != nil {
		t.Fatal(err)
	}
	sn, err := s.Create(context.Background(), "a", "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sn.Skipped, Skipped{".GitModules", "a path git refuses"}) {
		t.Errorf("Skipped = %v", sn.Skipped)
	}
}
