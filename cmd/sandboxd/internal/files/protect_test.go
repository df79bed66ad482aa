package files

import (
	"errors"
	"os"
	"testing"
)

// TestGitDirRefused: Write and Edit refuse what lies in a .git directory
// however it is reached, and leave the file as it was; Read still works,
// look-alike names pass, and AllowGitWrites lifts the rule.
func TestGitDirRefused(t *testing.T) {
	fx := newFixture(t, Options{})
	const config = "[core]\n\tbare = false\n"
	fx.put(t, ".git/config", config)
	fx.put(t, ".git/hooks/.keep", "")
	fx.put(t, "sub/.git/config", config)
	if err := os.Symlink(".git/config", fx.path("cfg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", fx.path("g")); err != nil {
		t.Fatal(err)
	}
	l := NewLedger()
	for _, p := range []string{".git/config", "cfg", "sub/.git/config", ".GIT/config", fx.path(".git/config")} {
		if _, err := fx.f.Read(l, p, 0, 0); err != nil && p != ".GIT/config" {
			t.Fatalf("Read %s: %v", p, err)
		}
	}
	for _, p := range []string{
		".git/config", ".git/hooks/pre-commit", ".git/new/dir/file", "sub/.git/config", ".GIT/config",
		"cfg", "g/hooks/post-checkout", "g/config", fx.path(".git/config"), ".git",
	} {
		if _, err := fx.f.Write(l, p, "[core]\n\tfsmonitor = \"touch /tmp/pwned\"\n"); !errors.Is(err, ErrGitDir) {
			t.Errorf("Write %s: %v, want ErrGitDir", p, err)
		}
	}
	if _, err := fx.f.Edit(l, ".git/config", "bare = false", "fsmonitor = x", false); !errors.Is(err, ErrGitDir) {
		t.Errorf("Edit .git/config: %v, want ErrGitDir", err)
	}
	if _, err := fx.f.Edit(l, "cfg", "bare = false", "fsmonitor = x", false); !errors.Is(err, ErrGitDir) {
		t.Errorf("Edit cfg: %v, want ErrGitDir", err)
	}
	if got := fx.content(t, ".git/config"); got != config {
		t.Errorf(".git/config now holds %q", got)
	}
	for _, p := range []string{"hooks/pre-commit", ".github/workflows/ci.yml", ".gitignore", "git/config", "my.git.txt"} {
		if _, err := fx.f.Write(l, p, "x\n"); err != nil {
			t.Errorf("Write %s: %v", p, err)
		}
	}

	allowed := newFixture(t, Options{AllowGitWrites: true})
	if _, err := allowed.f.Write(NewLedger(), ".git/hooks/pre-commit", "#!/bin/sh\n"); err != nil {
		t.Errorf("with AllowGitWrites: %v", err)
	}
}

// TestGitDirThroughAbsoluteSymlink: an absolute symlink into .git is
// judged where it leads too, and one elsewhere inside still writes.
func TestGitDirThroughAbsoluteSymlink(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, ".git/config", "x\n")
	fx.put(t, "src/main.go", "package main\n")
	if err := os.Symlink(fx.path(".git"), fx.path("abs-git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fx.path("src"), fx.path("abs-src")); err != nil {
		t.Fatal(err)
	}
	l := NewLedger()
	if _, err := fx.f.Write(l, "abs-git/hooks/pre-commit", "x\n"); !errors.Is(err, ErrGitDir) {
		t.Errorf("Write through an absolute link into .git: %v, want ErrGitDir", err)
	}
	if _, err := fx.f.Write(l, "abs-src/new.go", "package main\n"); err != nil {
		t.Errorf("Write through an absolute link inside: %v", err)
	}
}
