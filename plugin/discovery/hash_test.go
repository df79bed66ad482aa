package discovery

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSHA256(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := SHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	// sha256sum of "hello\n".
	if want := "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestSHA256Missing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope")
	_, err := SHA256(path)
	if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error naming %s", err, path)
	}
}
