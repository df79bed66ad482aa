package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
)

func TestReadNumbersLines(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "main.go", "package main\n\nfunc main() {}\n")
	wantEqual(t, fx.read(t, NewLedger(), "main.go", 0, 0),
		"     1\tpackage main\n     2\t\n     3\tfunc main() {}")
}

func TestReadLastLineWithoutNewlineAndCRLF(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "dos.txt", "one\r\ntwo\r\nthree")
	wantEqual(t, fx.read(t, NewLedger(), "dos.txt", 0, 0), "     1\tone\n     2\ttwo\n     3\tthree")
}

func TestReadOffsetLimit(t *testing.T) {
	fx := newFixture(t, Options{MaxLines: 3})
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	fx.put(t, "ten.txt", b.String())
	l := NewLedger()
	for _, tc := range []struct {
		offset, limit int
		want          string
	}{
		{3, 2, "     3\tline 3\n     4\tline 4\n\n[Showed lines 3-4 of 10. To read on, call Read with offset=5.]"},
		{0, 1, "     1\tline 1\n\n[Showed lines 1-1 of 10. To read on, call Read with offset=2.]"},
		{1, 1, "     1\tline 1\n\n[Showed lines 1-1 of 10. To read on, call Read with offset=2.]"},
		// No limit: MaxLines.
		{0, 0, "     1\tline 1\n     2\tline 2\n     3\tline 3\n\n[Showed lines 1-3 of 10. To read on, call Read with offset=4.]"},
		// Reaching the end needs no note.
		{9, 0, "     9\tline 9\n    10\tline 10"},
		{10, 5, "    10\tline 10"},
		// A limit over MaxLines is the caller's to choose.
		{5, 100, "     5\tline 5\n     6\tline 6\n     7\tline 7\n     8\tline 8\n     9\tline 9\n    10\tline 10"},
	} {
		wantEqual(t, fx.read(t, l, "ten.txt", tc.offset, tc.limit), tc.want)
	}
}

func TestReadOffsetPastEnd(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "three.txt", "a\nb\nc\n")
	_, err := fx.f.Read(NewLedger(), "three.txt", 4, 0)
	wantErr(t, err, `read "three.txt": offset 4 is past the end of the file, which has 3 lines`)
	fx.put(t, "one.txt", "a")
	_, err = fx.f.Read(NewLedger(), "one.txt", 2, 0)
	wantErr(t, err, "which has 1 line")
}

func TestReadNegativeOffsetOrLimit(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.txt", "a\n")
	_, err := fx.f.Read(NewLedger(), "a.txt", -1, 0)
	wantErr(t, err, "offset -1 is negative")
	_, err = fx.f.Read(NewLedger(), "a.txt", 0, -5)
	wantErr(t, err, "limit -5 is negative")
}

func TestReadTruncatesLongLines(t *testing.T) {
	fx := newFixture(t, Options{MaxLineLength: 10})
	fx.put(t, "long.txt", strings.Repeat("x", 25)+"\nshort\n"+strings.Repeat("é", 15)+"\r\n"+strings.Repeat("y", 10)+"\n")
	wantEqual(t, fx.read(t, NewLedger(), "long.txt", 0, 0),
		"     1\txxxxxxxxxx… [line truncated: 25 chars]\n"+
			"     2\tshort\n"+
			"     3\t"+strings.Repeat("é", 10)+"… [line truncated: 15 chars]\n"+
			"     4\tyyyyyyyyyy")
}

func TestReadLineLongerThanBuffer(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "min.js", strings.Repeat("z", 300_000)+"\r\nnext\n")
	wantEqual(t, fx.read(t, NewLedger(), "min.js", 0, 0),
		"     1\t"+strings.Repeat("z", 2000)+"… [line truncated: 300000 chars]\n     2\tnext")
}

func TestReadByteCap(t *testing.T) {
	fx := newFixture(t, Options{MaxReadBytes: 1000})
	var b, want strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "line %03d\n", i)
		if i <= 46 { // 16 bytes a line; 1000 less 256 for the note holds 46
			fmt.Fprintf(&want, "%6d\tline %03d\n", i, i)
		}
	}
	fx.put(t, "many.txt", b.String())
	got := fx.read(t, NewLedger(), "many.txt", 0, 0)
	wantEqual(t, got, want.String()+"\n[Output capped at 1000 bytes: showed lines 1-46 of 100. To read on, call Read with offset=47.]")
	if len(got) > 1000 {
		t.Fatalf("result is %d bytes, over the 1000 cap", len(got))
	}
	// Reading on from the offset the note gives continues where it stopped.
	if got := fx.read(t, NewLedger(), "many.txt", 47, 1); !strings.HasPrefix(got, "    47\tline 047\n") {
		t.Fatalf("read on: %q", got)
	}
}

func TestReadByteCapShowsOneLineAtLeast(t *testing.T) {
	fx := newFixture(t, Options{MaxReadBytes: 10})
	fx.put(t, "two.txt", "first line\nsecond line\n")
	wantEqual(t, fx.read(t, NewLedger(), "two.txt", 0, 0),
		"     1\tfirst line\n\n[Output capped at 10 bytes: showed lines 1-1 of 2. To read on, call Read with offset=2.]")
}

func TestReadRefusesBinary(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "nul.bin", "text\x00more text\n")
	_, err := fx.f.Read(NewLedger(), "nul.bin", 0, 0)
	wantErr(t, err, `read "nul.bin": it is a binary file (15 bytes)`)

	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(0x80 + i%0x7f) // high bytes and control bytes, no NUL
	}
	fx.put(t, "noise.bin", string(noise))
	_, err = fx.f.Read(NewLedger(), "noise.bin", 0, 0)
	wantErr(t, err, "it is a binary file (4096 bytes)")

	// Text in an 8-bit encoding is still text.
	fx.put(t, "latin1.txt", "caf\xe9 cr\xe8me br\xfbl\xe9e\n")
	wantEqual(t, fx.read(t, NewLedger(), "latin1.txt", 0, 0), "     1\tcaf\uFFFD cr\uFFFDme br\uFFFDl\uFFFDe")
}

func TestReadEmptyFile(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "empty.txt", "")
	l := NewLedger()
	wantEqual(t, fx.read(t, l, "empty.txt", 0, 0), "The file "+fx.path("empty.txt")+" exists but is empty.")
	// It was read, so it may be written.
	if _, err := fx.f.Write(l, "empty.txt", "now\n"); err != nil {
		t.Fatal(err)
	}
}

func TestReadDirectory(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "pkg/a.go", "package pkg\n")
	_, err := fx.f.Read(NewLedger(), "pkg", 0, 0)
	wantErr(t, err, `read "pkg": it is a directory, not a file; use Glob`)
	_, err = fx.f.Read(NewLedger(), fx.dir, 0, 0)
	wantErr(t, err, "it is a directory")
}

func TestReadMissingFile(t *testing.T) {
	fx := newFixture(t, Options{})
	_, err := fx.f.Read(NewLedger(), "nope.txt", 0, 0)
	wantErr(t, err, `read "nope.txt": file does not exist`)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%v is not fs.ErrNotExist", err)
	}
}

func TestReadSymlinkInsideRoot(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "real.txt", "real\n")
	if err := os.Symlink("real.txt", fx.path("link.txt")); err != nil {
		t.Fatal(err)
	}
	l := NewLedger()
	wantEqual(t, fx.read(t, l, "link.txt", 0, 0), "     1\treal")
	// Edited through the link, the target changes.
	if _, err := fx.f.Edit(l, "link.txt", "real", "edited", false); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, fx.content(t, "real.txt"), "edited\n")
}

func TestReadAbsolutePathInside(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "dir/a.txt", "a\n")
	l := NewLedger()
	wantEqual(t, fx.read(t, l, fx.path("dir/a.txt"), 0, 0), "     1\ta")
	// The ledger knows the file by its place in the workspace, however it
	// was named.
	if _, err := fx.f.Write(l, "./dir/../dir/a.txt", "b\n"); err != nil {
		t.Fatal(err)
	}
}

// TestReadCutNeverShowsPartOfASecret: a token across the 2,000-character
// cut of a long line is redacted whole before the line is cut, wherever
// it falls, and the cut moves back past the start of a word it splits.
// Issue 16, item 2.
func TestReadCutNeverShowsPartOfASecret(t *testing.T) {
	token := "ghp_" + "EGQ80YRP10eougTfIhpazOc61hVRd82Wzj5O"
	filler := strings.Repeat("lorem ipsum ", 400)
	for _, at := range []int{DefaultMaxLineLength - 30, DefaultMaxLineLength - 16, DefaultMaxLineLength - 1} {
		line := filler[:at] + " " + token + " " + filler
		fx, l := readFixture(t, "long.txt", "first\n"+line+"\n")
		out := fx.read(t, l, "long.txt", 0, 0)
		for i := 0; i+6 <= len(token); i++ {
			if strings.Contains(out, token[i:i+6]) {
				t.Fatalf("at %d: %q of the token shows:\n%s", at, token[i:i+6], out[len(out)-120:])
			}
		}
		if !strings.Contains(out, "… [line truncated: ") {
			t.Fatalf("at %d: the line is not cut", at)
		}
	}
	// A value no format knows, cut in its middle: the cut moves back to
	// its start, and the server's scrub of the whole result sees nothing
	// of it.
	value := "Zq9Wx7Vb5Nm3Kl1Pj8Hg6"
	line := filler[:DefaultMaxLineLength-10] + " " + value + " " + filler
	fx, l := readFixture(t, "long.txt", line+"\n")
	if out := fx.read(t, l, "long.txt", 0, 0); strings.Contains(out, value[:6]) {
		t.Fatalf("the start of the value shows: %s", out[len(out)-120:])
	}
}
