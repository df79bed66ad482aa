package files

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

func TestWriteNewFileCreatesParents(t *testing.T) {
	fx := newFixture(t, Options{})
	out, err := fx.f.Write(NewLedger(), "a/b/c.txt", "hello\nworld\n")
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, out, "Wrote 12 bytes (2 lines) to "+fx.path("a/b/c.txt"))
	wantEqual(t, fx.content(t, "a/b/c.txt"), "hello\nworld\n")
	fx.wantMode(t, "a/b/c.txt", 0o644)
}

func TestWriteExistingWithoutReadRefused(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.txt", "original\n")
	_, err := fx.f.Write(NewLedger(), "a.txt", "clobbered\n")
	wantErr(t, err, `write "a.txt": file has not been read in this session; Read it first`)
	wantEqual(t, fx.content(t, "a.txt"), "original\n")
}

func TestWriteAfterRead(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.txt", "one\ntwo\nthree\n")
	l := NewLedger()
	fx.read(t, l, "a.txt", 2, 1) // a part is enough
	out, err := fx.f.Write(l, "a.txt", "new")
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, out, "Wrote 3 bytes (1 line) to "+fx.path("a.txt"))
	wantEqual(t, fx.content(t, "a.txt"), "new")
	// The ledger holds what was written: writing and editing on need no Read.
	if _, err := fx.f.Write(l, "a.txt", "newer"); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.f.Edit(l, "a.txt", "newer", "newest", false); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, fx.content(t, "a.txt"), "newest")
}

func TestWriteStaleRefused(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.txt", "v1\n")
	l := NewLedger()
	fx.read(t, l, "a.txt", 0, 0)
	fx.put(t, "a.txt", "version 2\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(fx.path("a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	_, err := fx.f.Write(l, "a.txt", "mine\n")
	wantErr(t, err, `write "a.txt": file changed since it was read; Read it again`)
	wantEqual(t, fx.content(t, "a.txt"), "version 2\n")
	// Read again, it may be written.
	fx.read(t, l, "a.txt", 0, 0)
	if _, err := fx.f.Write(l, "a.txt", "mine\n"); err != nil {
		t.Fatal(err)
	}
}

// sameSizeAndMtime rewrites rel with content of the same size behind the
// tools' back and puts its mtime back, so only the hash tells.
func sameSizeAndMtime(t *testing.T, fx *fixture, rel, content string) {
	t.Helper()
	fi, err := os.Stat(fx.path(rel))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(content)) != fi.Size() {
		t.Fatalf("content of %d bytes for a file of %d", len(content), fi.Size())
	}
	fx.put(t, rel, content)
	if err := os.Chtimes(fx.path(rel), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func TestWriteStaleSameSizeAndMtimeRefused(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.txt", "AAAA\n")
	l := NewLedger()
	fx.read(t, l, "a.txt", 0, 0)
	sameSizeAndMtime(t, fx, "a.txt", "BBBB\n")
	_, err := fx.f.Write(l, "a.txt", "mine\n")
	wantErr(t, err, "file changed since it was read; Read it again")
	wantEqual(t, fx.content(t, "a.txt"), "BBBB\n")
}

func TestWriteTouchedButUnchangedAllowed(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.txt", "same\n")
	l := NewLedger()
	fx.read(t, l, "a.txt", 0, 0)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(fx.path("a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.f.Write(l, "a.txt", "mine\n"); err != nil {
		t.Fatal(err)
	}
}

func TestWriteDirectoryRefused(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "pkg/a.go", "package pkg\n")
	_, err := fx.f.Write(NewLedger(), "pkg", "x")
	wantErr(t, err, `write "pkg": it is a directory`)
	_, err = fx.f.Write(NewLedger(), ".", "x")
	wantErr(t, err, "it is a directory")
}

func TestWriteKeepsMode(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(fx.path("run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := NewLedger()
	fx.read(t, l, "run.sh", 0, 0)
	if _, err := fx.f.Write(l, "run.sh", "#!/bin/sh\necho hi\n"); err != nil {
		t.Fatal(err)
	}
	fx.wantMode(t, "run.sh", 0o755)
}

func TestLedgerIsPerSession(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.txt", "shared\n")
	fx.read(t, NewLedger(), "a.txt", 0, 0)
	other := NewLedger()
	_, err := fx.f.Write(other, "a.txt", "x")
	wantErr(t, err, "file has not been read in this session")
	_, err = fx.f.Edit(other, "a.txt", "shared", "x", false)
	wantErr(t, err, "file has not been read in this session")
	// A nil ledger remembers nothing but breaks nothing.
	fx.read(t, nil, "a.txt", 0, 0)
	_, err = fx.f.Write(nil, "a.txt", "x")
	wantErr(t, err, "file has not been read in this session")
	if _, err := fx.f.Write(nil, "new.txt", "x"); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, fx.content(t, "a.txt"), "shared\n")
}

func TestLedgerIsPerWorkspace(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.txt", "one\n")
	otherDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(otherDir, "a.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	otherWS, err := workspace.Open(otherDir)
	if err != nil {
		t.Fatal(err)
	}
	defer otherWS.Close()
	l := NewLedger()
	fx.read(t, l, "a.txt", 0, 0)
	_, err = New(otherWS, Options{}).Write(l, "a.txt", "x")
	wantErr(t, err, "file has not been read in this session")
}
