package files

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// readFixture is a fixture with rel holding content, read through a new
// ledger.
func readFixture(t *testing.T, rel, content string) (*fixture, *Ledger) {
	t.Helper()
	fx := newFixture(t, Options{})
	fx.put(t, rel, content)
	l := NewLedger()
	fx.read(t, l, rel, 0, 0)
	return fx, l
}

func TestEditUnique(t *testing.T) {
	fx, l := readFixture(t, "main.go", "package main\n\nfunc main() {\n\tprintln(1)\n}\n")
	out, err := fx.f.Edit(l, "main.go", "println(1)", "println(2)", false)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, out, "Replaced 1 occurrence in "+fx.path("main.go"))
	wantEqual(t, fx.content(t, "main.go"), "package main\n\nfunc main() {\n\tprintln(2)\n}\n")
}

func TestEditMultipleRefused(t *testing.T) {
	fx, l := readFixture(t, "a.txt", "x = 1\nx = 1\nx = 1\n")
	_, err := fx.f.Edit(l, "a.txt", "x = 1", "x = 2", false)
	wantErr(t, err, `edit "a.txt": old_string occurs 3 times in `+fx.path("a.txt"), "make it unique", "replace_all")
	wantEqual(t, fx.content(t, "a.txt"), "x = 1\nx = 1\nx = 1\n")
}

func TestEditReplaceAll(t *testing.T) {
	fx, l := readFixture(t, "a.txt", "x = 1\nx = 1\nx = 1\n")
	out, err := fx.f.Edit(l, "a.txt", "x = 1", "x = 2", true)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, out, "Replaced 3 occurrences in "+fx.path("a.txt"))
	wantEqual(t, fx.content(t, "a.txt"), "x = 2\nx = 2\nx = 2\n")
}

func TestEditNotFound(t *testing.T) {
	fx, l := readFixture(t, "a.txt", "alpha\nbeta\n")
	_, err := fx.f.Edit(l, "a.txt", "gamma", "delta", false)
	wantErr(t, err, `edit "a.txt": old_string not found in `+fx.path("a.txt"))
	// Byte for byte: case and whitespace count.
	_, err = fx.f.Edit(l, "a.txt", "Alpha", "x", false)
	wantErr(t, err, "old_string not found")

	fx.put(t, "dos.txt", "one\r\ntwo\r\n")
	fx.read(t, l, "dos.txt", 0, 0)
	_, err = fx.f.Edit(l, "dos.txt", "one\ntwo", "x", false)
	wantErr(t, err, "old_string not found", `the file has \r\n line endings`)
}

func TestEditArgumentsChecked(t *testing.T) {
	fx, l := readFixture(t, "a.txt", "alpha\n")
	_, err := fx.f.Edit(l, "a.txt", "", "x", false)
	wantErr(t, err, `edit "a.txt": old_string is empty`)
	_, err = fx.f.Edit(l, "a.txt", "alpha", "alpha", false)
	wantErr(t, err, "old_string and new_string are the same")
	_, err = fx.f.Edit(l, "missing.txt", "a", "b", false)
	wantErr(t, err, `edit "missing.txt": file does not exist`)
	_, err = fx.f.Edit(l, ".", "a", "b", false)
	wantErr(t, err, "it is a directory")
}

func TestEditKeepsMode(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "run.sh", "#!/bin/sh\necho hi\n")
	if err := os.Chmod(fx.path("run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := NewLedger()
	fx.read(t, l, "run.sh", 0, 0)
	if _, err := fx.f.Edit(l, "run.sh", "hi", "there", false); err != nil {
		t.Fatal(err)
	}
	fx.wantMode(t, "run.sh", 0o755)
}

func TestEditWithoutReadRefused(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.txt", "alpha\n")
	_, err := fx.f.Edit(NewLedger(), "a.txt", "alpha", "beta", false)
	wantErr(t, err, `edit "a.txt": file has not been read in this session; Read it first`)
	wantEqual(t, fx.content(t, "a.txt"), "alpha\n")
}

func TestEditStaleRefused(t *testing.T) {
	fx, l := readFixture(t, "a.txt", "alpha\n")
	fx.put(t, "a.txt", "alpha and more\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(fx.path("a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	_, err := fx.f.Edit(l, "a.txt", "alpha", "beta", false)
	wantErr(t, err, `edit "a.txt": file changed since it was read; Read it again`)
	wantEqual(t, fx.content(t, "a.txt"), "alpha and more\n")
}

func TestEditStaleSameSizeAndMtimeRefused(t *testing.T) {
	fx, l := readFixture(t, "a.txt", "alpha\n")
	sameSizeAndMtime(t, fx, "a.txt", "alpha!")
	_, err := fx.f.Edit(l, "a.txt", "alpha", "beta", false)
	wantErr(t, err, "file changed since it was read; Read it again")
	wantEqual(t, fx.content(t, "a.txt"), "alpha!")
}

// One session's edits in parallel each see the last one's result, so all
// land; the race detector watches the ledger and the check-then-write.
func TestEditConcurrentInOneSession(t *testing.T) {
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, "slot%d\n", i)
	}
	fx, l := readFixture(t, "a.txt", b.String())
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, errs[i] = fx.f.Edit(l, "a.txt", fmt.Sprintf("slot%d\n", i), fmt.Sprintf("done%d\n", i), false)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
	}
	b.Reset()
	for i := range 8 {
		fmt.Fprintf(&b, "done%d\n", i)
	}
	wantEqual(t, fx.content(t, "a.txt"), b.String())
}
