package files

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

func TestEscapesRefused(t *testing.T) {
	fx := newFixture(t, Options{})
	if err := os.Symlink(fx.secret, fx.path("out-abs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/secret", fx.path("out-rel")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", fx.path("out-dir")); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		"../outside/secret",
		"sub/../../outside/secret",
		fx.secret,
		"/etc/passwd",
		"out-abs",
		"out-rel",
		"out-dir/secret",
	}
	for _, p := range paths {
		l := NewLedger()
		_, err := fx.f.Read(l, p, 0, 0)
		wantOutside(t, "Read", p, err)
		_, err = fx.f.Write(l, p, "pwned\n")
		wantOutside(t, "Write", p, err)
		_, err = fx.f.Edit(l, p, "SECRET", "pwned", false)
		wantOutside(t, "Edit", p, err)
	}
	b, err := os.ReadFile(fx.secret)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, string(b), "SECRET\n")
	if _, err := os.Stat(filepath.Join(filepath.Dir(fx.dir), "sub")); err == nil {
		t.Fatal("an escape created a directory outside the workspace")
	}
}

func wantOutside(t *testing.T, tool, path string, err error) {
	t.Helper()
	var oe *workspace.OutsideError
	if !errors.As(err, &oe) {
		t.Fatalf("%s(%q): got %v, want an *OutsideError", tool, path, err)
	}
	wantErr(t, err, "outside the workspace")
}
