package cacheseed

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCopyAddsOnly: what dst lacks is copied, what it has is kept, and
// trim.txt stays dst's own.
func TestCopyAddsOnly(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	write(t, filepath.Join(src, "README"), "cache")
	write(t, filepath.Join(src, "trim.txt"), "1700000000")
	write(t, filepath.Join(src, "0a", "0a11-d"), "output")
	write(t, filepath.Join(src, "0a", "0a22-a"), "entry")
	write(t, filepath.Join(src, "ff", "ff33-d"), "seed's")
	write(t, filepath.Join(dst, "ff", "ff33-d"), "mine")

	res, err := Copy(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Files: 3, Bytes: int64(len("cache") + len("output") + len("entry")), Present: 1}); res != want {
		t.Errorf("Copy = %+v, want %+v", res, want)
	}
	for rel, want := range map[string]string{"README": "cache", "0a/0a11-d": "output", "0a/0a22-a": "entry", "ff/ff33-d": "mine"} {
		if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", rel, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "trim.txt")); !os.IsNotExist(err) {
		t.Errorf("trim.txt copied: %v", err)
	}
	if res, err := Copy(src, dst); err != nil || res.Files != 0 || res.Present != 4 {
		t.Errorf("second Copy = %+v, %v; want nothing copied, 4 present", res, err)
	}
}

// TestCopyRefusesALink: a symlink where a file would go is not followed.
func TestCopyRefusesALink(t *testing.T) {
	src, dst, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(src, "0a", "0a11-d"), "output")
	if err := os.Mkdir(filepath.Join(dst, "0a"), 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(elsewhere, "victim")
	if err := os.Symlink(victim, filepath.Join(dst, "0a", "0a11-d")); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(src, dst); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Errorf("Copy wrote through a symlink: %v", err)
	}
}

// TestSeededCacheIsUsed: a cache the go command filled, copied into an
// empty one, spares the next build its compile.
func TestSeededCacheIsUsed(t *testing.T) {
	mod := t.TempDir()
	write(t, filepath.Join(mod, "go.mod"), "module example.com/seed\n\ngo 1.24\n")
	write(t, filepath.Join(mod, "p.go"), "package p\n\n// Two is two.\nfunc Two() int { return 2 }\n")
	build := func(cache string) string {
		cmd := exec.Command("go", "build", "-x", "./...")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOCACHE="+cache, "GOFLAGS=", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		return string(out)
	}
	seed := t.TempDir()
	if out := build(seed); !strings.Contains(out, "/compile ") {
		t.Fatalf("the first build compiled nothing:\n%s", out)
	}
	fresh := filepath.Join(t.TempDir(), "go-build")
	if _, err := Copy(seed, fresh); err != nil {
		t.Fatal(err)
	}
	if out := build(fresh); strings.Contains(out, "/compile ") {
		t.Errorf("the build on the seeded cache compiled again:\n%s", out)
	}
}
