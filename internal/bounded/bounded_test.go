package bounded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	data, err := Read(strings.NewReader("12345"), 5, "input", "")
	if err != nil || string(data) != "12345" {
		t.Fatalf("at the limit: %q, %v", data, err)
	}
	_, err = Read(strings.NewReader("123456"), 5, "input", "raise it with --max-input")
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 5 || err.Error() != "input is larger than 5 bytes (raise it with --max-input)" {
		t.Fatalf("past the limit: %v", err)
	}
}

func TestReadFileStopsAtTheLimit(t *testing.T) {
	// /dev/zero never ends: the read must stop one byte past the limit.
	_, err := ReadFile("/dev/zero", 1<<20, "config file /dev/zero", "")
	if err == nil || err.Error() != "config file /dev/zero is larger than 1 MiB" {
		t.Fatalf("err = %v", err)
	}
	_, err = ReadFile(filepath.Join(t.TempDir(), "missing"), 10, "x", "")
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1500: "1500 bytes", 1 << 10: "1 KiB", 64 << 20: "64 MiB", 3 << 30: "3 GiB", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTail(t *testing.T) {
	tl := &Tail{Max: 4}
	for _, w := range []string{"ab", "cdef", "g", "", "hijklmnop", "q"} {
		_, _ = tl.Write([]byte(w))
	}
	if got := string(tl.Bytes()); got != "nopq" {
		t.Errorf("Bytes = %q, want the last 4 bytes", got)
	}
	if got := string((&Tail{Max: 8}).Bytes()); got != "" {
		t.Errorf("empty tail = %q", got)
	}
}

// TestReadInChunks: a reader of unknown size (a pipe) is read whole and
// exactly, at every chunk boundary, and stops one byte past the limit.
func TestReadInChunks(t *testing.T) {
	var all strings.Builder
	for i := 0; all.Len() < 3*lastChunk; i++ {
		fmt.Fprintf(&all, "%d,", i)
	}
	for _, n := range []int{0, 1, firstChunk - 1, firstChunk, firstChunk + 1, 3*firstChunk + 7, lastChunk, 3*lastChunk - 5} {
		want := all.String()[:n]
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = w.WriteString(want); w.Close() }()
		got, err := Read(r, int64(3*lastChunk), "input", "")
		r.Close()
		if err != nil || string(got) != want {
			t.Fatalf("%d bytes from a pipe: got %d bytes (equal %v), %v", n, len(got), string(got) == want, err)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { _, _ = w.WriteString(all.String()); w.Close() }()
	if _, err := Read(r, 1000, "the input on stdin", ""); err == nil || err.Error() != "the input on stdin is larger than 1000 bytes" {
		t.Fatalf("past the limit: %v", err)
	}
}
