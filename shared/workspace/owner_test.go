package workspace

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// TestWriteFileOwners: run as root, a write keeps the owner of the file
// it replaces, and what it creates (the file, its new directories) gets
// the owner SetOwner named, or root's without one.
func TestWriteFileOwners(t *testing.T) {
	proctest.RequireRoot(t) // owners can be given only as root
	dir := t.TempDir()
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	owned := func(rel string) (int, int) {
		fi, err := os.Lstat(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		return int(st.Uid), int(st.Gid)
	}
	if err := w.WriteFile("plain.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if u, g := owned("plain.txt"); u != 0 || g != 0 {
		t.Errorf("without SetOwner a new file is %d:%d, want root's", u, g)
	}
	if err := os.WriteFile(filepath.Join(dir, "theirs.txt"), []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(dir, "theirs.txt"), 1234, 1235); err != nil {
		t.Fatal(err)
	}
	w.SetOwner(2000, 2001)
	if err := w.WriteFile("theirs.txt", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if u, g := owned("theirs.txt"); u != 1234 || g != 1235 {
		t.Errorf("a replaced file is %d:%d, want its old 1234:1235", u, g)
	}
	if err := w.WriteFile("a/b/new.txt", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"a", "a/b", "a/b/new.txt"} {
		if u, g := owned(rel); u != 2000 || g != 2001 {
			t.Errorf("%s is %d:%d, want 2000:2001", rel, u, g)
		}
	}
	if u, _ := owned("."); u != 0 {
		t.Errorf("the workspace itself changed owner to %d", u)
	}
}
