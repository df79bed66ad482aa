package remoteproc

import (
	"bytes"
	"strings"
	"testing"
)

// feed writes each chunk to the filter's stderr or stdout ("o:" prefix).
func feed(f *Filter, chunks ...string) {
	for _, c := range chunks {
		if s, ok := strings.CutPrefix(c, "o:"); ok {
			_, _ = f.Stdout().Write([]byte(s))
			continue
		}
		_, _ = f.Stderr().Write([]byte(c))
	}
	f.Close()
}

func TestFilterSplitsControlLines(t *testing.T) {
	whole := "\x1epks:42\n\x1epks:run\nerr one\n\x1epks:exit:7\n"
	// Every way of cutting the stream in two gives the same result.
	for i := 0; i <= len(whole); i++ {
		var out, errb bytes.Buffer
		f := NewFilter(&out, &errb, false)
		feed(f, "o:early ", whole[:i], whole[i:], "o:late")
		if out.String() != "early late" || errb.String() != "err one\n" || f.PID() != 42 {
			t.Fatalf("cut %d: stdout %q stderr %q pid %d", i, out.String(), errb.String(), f.PID())
		}
		if !f.Ran() {
			t.Fatalf("cut %d: not Ran", i)
		}
		if code, ok := f.ExitCode(); !ok || code != 7 {
			t.Fatalf("cut %d: exit %d %v", i, code, ok)
		}
	}
}

func TestFilterKeepsLookalikes(t *testing.T) {
	var out, errb bytes.Buffer
	f := NewFilter(&out, &errb, false)
	body := "\x1e alone\n\x1epks:unknown\n\x1epks:exit:x\nend \x1epk"
	feed(f, "\x1epks:9\n", body)
	if errb.String() != body {
		t.Fatalf("stderr %q, want %q", errb.String(), body)
	}
	if _, ok := f.ExitCode(); ok {
		t.Error("exit reported")
	}
}

func TestFilterNoWrapper(t *testing.T) {
	var out, errb bytes.Buffer
	f := NewFilter(&out, &errb, false)
	feed(f, "o:junk", "OCI runtime exec failed: exec: \"/bin/sh\": no such file\n")
	if out.Len() != 0 || errb.Len() != 0 {
		t.Fatalf("passed on: %q %q", out.String(), errb.String())
	}
	select {
	case <-f.Started():
		t.Fatal("started")
	default:
	}
	if got := f.ClientMessage(); got != "junk\nOCI runtime exec failed: exec: \"/bin/sh\": no such file" {
		t.Fatalf("ClientMessage %q", got)
	}
}

func TestFilterClientAfterExit(t *testing.T) {
	var out, errb bytes.Buffer
	f := NewFilter(&out, &errb, true)
	feed(f, "\x1epks:9\nhook err\n\x1epks:exit:3\ncommand terminated with exit code 3\n")
	if errb.String() != "hook err\n" || f.ClientMessage() != "command terminated with exit code 3" {
		t.Fatalf("stderr %q client %q", errb.String(), f.ClientMessage())
	}
}

func TestFilterNotFound(t *testing.T) {
	var out, errb bytes.Buffer
	f := NewFilter(&out, &errb, false)
	feed(f, "\x1epks:9\n\x1epks:notfound\n")
	if !f.NotFound() || errb.Len() != 0 {
		t.Fatalf("notfound %v stderr %q", f.NotFound(), errb.String())
	}
}

func TestFilterKeepsClientClosingWordsAfterKill(t *testing.T) {
	for _, tc := range []struct{ after, stderr, client string }{
		{"late\ncommand terminated with exit code 137\n", "early\nlate\n", "command terminated with exit code 137\n"},
		{"late output\n", "early\nlate output\n", ""},
		{"command terminated with exit code 137\n", "early\n", "command terminated with exit code 137\n"},
		// The command was killed mid-line: kubectl's words follow on it.
		{"no newline", "early\nno newline", ""},
		{"late, no newlinecommand terminated with exit code 137\n", "early\nlate, no newline", "command terminated with exit code 137\n"},
		{"command terminated with exit code 137\nmore\n", "early\ncommand terminated with exit code 137\nmore\n", ""},
		{"command terminated with exit code 1", "early\n", "command terminated with exit code 1"},
	} {
		var stdout, stderr bytes.Buffer
		f := NewFilter(&stdout, &stderr, true)
		_, _ = f.Stderr().Write([]byte(Prefix + "7\n" + Prefix + "run\nearly\n"))
		f.Killed()
		for i := range len(tc.after) { // byte by byte: the words may come split
			_, _ = f.Stderr().Write([]byte{tc.after[i]})
		}
		// Before the stream ends, all but the client's words went on.
		if stderr.String() != tc.stderr {
			t.Errorf("after %q, before Close: stderr %q, want %q", tc.after, stderr.String(), tc.stderr)
		}
		f.Close()
		if stderr.String() != tc.stderr || f.ClientMessage() != strings.TrimSpace(tc.client) {
			t.Errorf("after %q: stderr %q client %q", tc.after, stderr.String(), f.ClientMessage())
		}
	}
}
