package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/snapshot"
)

// TestSnapshotOptions: --snapshot-dir is made absolute (sandboxd's
// working directory is no anchor for the git it runs), and the file cap
// defaults to the package's and must be positive.
func TestSnapshotOptions(t *testing.T) {
	ws := t.TempDir()
	env := map[string]string{"SANDBOXD_SNAPSHOT_DIR": "snaps", "SANDBOXD_SNAPSHOT_MAX_FILE_SIZE": "4096"}
	getenv := func(k string) string { return env[k] }
	o, err := parseOptions([]string{"--workspace", ws}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := o.config(getenv)
	if err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	if cfg.SnapshotDir != filepath.Join(cwd, "snaps") || cfg.SnapshotMaxFileSize != 4096 {
		t.Errorf("from env: dir %q, cap %d", cfg.SnapshotDir, cfg.SnapshotMaxFileSize)
	}
	none := func(string) string { return "" }
	o, err = parseOptions([]string{"--workspace", ws}, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, _, err = o.config(none); err != nil || cfg.SnapshotDir != "" || cfg.SnapshotMaxFileSize != snapshot.DefaultMaxFileSize {
		t.Errorf("defaults: dir %q, cap %d, %v", cfg.SnapshotDir, cfg.SnapshotMaxFileSize, err)
	}
	o, err = parseOptions([]string{"--workspace", ws, "--snapshot-max-file-size", "0"}, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err = o.config(none); err == nil || !strings.Contains(err.Error(), "--snapshot-max-file-size") {
		t.Errorf("a cap of 0: %v", err)
	}
}

// TestSnapshotDirThroughSymlinkRefused: a --snapshot-dir reached through
// a symlink into the workspace is refused at start, whether it exists
// yet or not, and nothing is made in the workspace.
func TestSnapshotDirThroughSymlinkRefused(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(outside, "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{link, filepath.Join(link, "sub"), filepath.Join(link, "snaps"), filepath.Join(link, "new", "deeper")} {
		err := run(context.Background(), []string{"--workspace", ws, "--snapshot-dir", dir, "--stdio"},
			func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "is inside the workspace") {
			t.Errorf("--snapshot-dir %s: %v, want it refused as inside the workspace", dir, err)
		}
	}
	entries, _ := os.ReadDir(ws)
	if len(entries) != 1 {
		t.Errorf("the workspace holds %d entries, want only sub", len(entries))
	}
}
