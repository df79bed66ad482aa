package kubebox

import (
	"bytes"
	"strings"
	"testing"
)

func TestKubectlLogFilter(t *testing.T) {
	var out bytes.Buffer
	f := newKubectlLogFilter(&out)
	f.SetPID(17490)
	own := "E1126 14:11:24.276121   17490 v2.go:104] \"Unhandled Error\" err=\"write tcp 127.0.0.1:41986->127.0.0.1:6443: write: broken pipe\"\n"
	hooks := "E1126 14:11:24.276121       7 main.go:12] the hook's own klog line\n"
	// Written in pieces that split lines, as a pipe delivers them.
	input := "err 1\n" + own + hooks + "no newline at the end"
	for _, piece := range []string{input[:3], input[3:40], input[40:]} {
		if _, err := f.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "err 1\n"+hooks+"no newline at the end"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}

	// A line too long to be held goes through whole.
	out.Reset()
	g := newKubectlLogFilter(&out)
	g.SetPID(1)
	long := strings.Repeat("x", maxHeldLine+10)
	_, _ = g.Write([]byte(long))
	_ = g.Flush()
	if out.String() != long {
		t.Fatalf("a long line: %d bytes out of %d", out.Len(), len(long))
	}

	// A hook's partial line that cannot be kubectl's goes through before
	// its newline, and before Flush: a call cut off at its timeout has it.
	out.Reset()
	h := newKubectlLogFilter(&out)
	h.SetPID(1)
	for _, piece := range []string{"started", "-err", " more\nE11", "26 14:11:24.276121       1 v2.go:1] kubectl's\nE11"} {
		_, _ = h.Write([]byte(piece))
	}
	if got, want := out.String(), "started-err more\n"; got != want { // "E11" may be kubectl's: held
		t.Fatalf("before Flush: got %q, want %q", got, want)
	}
	_ = h.Flush()
	_, _ = h.Write([]byte(" late"))
	if got, want := out.String(), "started-err more\nE11 late"; got != want {
		t.Fatalf("after Flush: got %q, want %q", got, want)
	}
}

func TestMayBeKlog(t *testing.T) {
	for in, want := range map[string]bool{
		"":                           true,
		"E":                          true,
		"E1126 14:11:2":              true,
		"E1126 14:11:24.276121   17": true,
		"Error: x":                   false,
		"started":                    false,
		"I1126-":                     false,
	} {
		if got := mayBeKlog([]byte(in)); got != want {
			t.Errorf("mayBeKlog(%q) = %v, want %v", in, got, want)
		}
	}
}
