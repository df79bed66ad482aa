package dockertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadStatic(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, mentions string
	}{
		{path: filepath.Join(t.TempDir(), "missing"), mentions: "busybox-static"},
		{path: notELF, mentions: "not an ELF binary"},
		{path: "/bin/sh", mentions: "dynamically linked"}, // dash, linked against libc
	} {
		if _, err := readStatic(tt.path); err == nil || !strings.Contains(err.Error(), tt.mentions) {
			t.Errorf("readStatic(%s) = %v, want an error mentioning %q", tt.path, err, tt.mentions)
		}
	}
	t.Run("busybox-static", func(t *testing.T) {
		need(t, busyboxProblem()) // make unit does not install it
		if _, err := readStatic(busyboxPath); err != nil {
			t.Errorf("readStatic(%s): %v", busyboxPath, err)
		}
	})
}
