package shell

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestOutputReadFromKeepsUpToLimit(t *testing.T) {
	const limit = 1000
	for _, size := range []int{0, 1, 511, 512, 513, limit - 1, limit, limit + 1, 5 * limit, 200 << 10} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			in := make([]byte, size)
			for i := range in {
				in[i] = byte(i)
			}
			o := NewOutput(limit)
			// HalfReader makes the reads short and uneven, as pipes do.
			n, err := o.ReadFrom(iotest.HalfReader(bytes.NewReader(in)))
			if err != nil || n != int64(size) {
				t.Fatalf("ReadFrom = %d, %v; want %d, nil", n, err, size)
			}
			keep := min(size, limit)
			if got := o.Bytes(); !bytes.Equal(got, in[:keep]) {
				t.Errorf("kept %d bytes, want the first %d", len(got), keep)
			}
			if o.Len() != keep || o.Truncated() != (size > limit) {
				t.Errorf("Len = %d, Truncated = %v; want %d, %v", o.Len(), o.Truncated(), keep, size > limit)
			}
		})
	}
}

func TestOutputReadFromReportsReadError(t *testing.T) {
	o := NewOutput(10)
	_, err := o.ReadFrom(iotest.ErrReader(io.ErrUnexpectedEOF))
	if err != io.ErrUnexpectedEOF {
		t.Errorf("err = %v, want %v", err, io.ErrUnexpectedEOF)
	}
}

func TestOutputWrite(t *testing.T) {
	o := NewOutput(10)
	for _, chunk := range []string{"abc", "defgh", "ijklmnop", "q"} {
		if n, err := o.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want all of it consumed", chunk, n, err)
		}
	}
	if got := string(o.Bytes()); got != "abcdefghij" || !o.Truncated() {
		t.Errorf("Bytes = %q, Truncated = %v; want %q, true", got, o.Truncated(), "abcdefghij")
	}
}

func TestOutputSince(t *testing.T) {
	o := NewOutput(100)
	o.Write([]byte("hello "))
	seen := o.Len()
	o.Write([]byte("world"))
	for _, tc := range []struct {
		off  int
		want string
	}{{-1, "hello world"}, {0, "hello world"}, {seen, "world"}, {11, ""}, {50, ""}} {
		if got := string(o.Since(tc.off)); got != tc.want {
			t.Errorf("Since(%d) = %q, want %q", tc.off, got, tc.want)
		}
	}
}

func TestOutputDefaultLimit(t *testing.T) {
	if o := NewOutput(0); o.limit != sandbox.DefaultOutputLimit {
		t.Errorf("limit = %d, want %d", o.limit, sandbox.DefaultOutputLimit)
	}
}

// A process that prints far more than the cap is drained to the end (it
// does not block on a full pipe) while memory stays near the cap. The
// flood is 1 GiB, or under -short 256 MiB: still four times the memory
// the capture may take.
func TestRunCapsStdoutFloodWithBoundedMemory(t *testing.T) {
	const limit = 1 << 20
	flood := 1 << 30
	if testing.Short() {
		flood = 256 << 20
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	req := sandbox.Request{Command: "head", Args: []string{"-c", strconv.Itoa(flood), "/dev/zero"}}
	resp, err := Run(context.Background(), req, Options{OutputLimit: limit, Timeout: sandboxFloodTimeout})
	runtime.ReadMemStats(&after)

	if err != nil {
		t.Fatalf("Run: %v (the flood must be drained, not time out)", err)
	}
	if len(resp.Stdout) != limit || !resp.StdoutTruncated {
		t.Errorf("stdout = %d bytes, truncated %v; want %d, true", len(resp.Stdout), resp.StdoutTruncated, limit)
	}
	if resp.StderrTruncated || len(resp.Stderr) != 0 {
		t.Errorf("stderr = %q, truncated %v; want empty", resp.Stderr, resp.StderrTruncated)
	}
	if !bytes.Equal(resp.Stdout, make([]byte, limit)) {
		t.Error("stdout is not the first bytes the process wrote")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d MiB while capturing %d MiB at a 1 MiB cap", alloc>>20, flood>>20)
	}
}

const sandboxFloodTimeout = 2 * time.Minute // -race on a loaded machine

func TestRunCapsStderrSeparately(t *testing.T) {
	resp, err := Run(context.Background(), sh(`head -c 5000000 /dev/zero >&2; printf ok`), Options{OutputLimit: 1000})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(resp.Stderr) != 1000 || !resp.StderrTruncated {
		t.Errorf("stderr = %d bytes, truncated %v; want 1000, true", len(resp.Stderr), resp.StderrTruncated)
	}
	if string(resp.Stdout) != "ok" || resp.StdoutTruncated {
		t.Errorf("stdout = %q, truncated %v; want %q, false", resp.Stdout, resp.StdoutTruncated, "ok")
	}
}

func TestRunOutputExactlyAtLimitIsNotTruncated(t *testing.T) {
	resp, err := Run(context.Background(), sh(`printf 0123456789`), Options{OutputLimit: 10})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(resp.Stdout) != "0123456789" || resp.StdoutTruncated {
		t.Errorf("stdout = %q, truncated %v; want all 10 bytes, false", resp.Stdout, resp.StdoutTruncated)
	}
}

func TestStreamingOutputPassesBytesOnWithinTheLimit(t *testing.T) {
	var sink bytes.Buffer
	resp, err := Run(context.Background(), sandbox.Request{
		Command: "sh", Args: []string{"-c", "head -c 300000 /dev/zero | tr '\\0' x; echo err >&2"},
	}, Options{OutputLimit: 200000, StdoutSink: &sink})
	if err != nil {
		t.Fatal(err)
	}
	if sink.Len() != 200000 || strings.Trim(sink.String(), "x") != "" {
		t.Fatalf("sink got %d bytes, want 200000 x", sink.Len())
	}
	if !resp.StdoutTruncated || len(resp.Stdout) != 0 {
		t.Fatalf("response: %d stdout bytes, truncated %v; want none kept, truncated", len(resp.Stdout), resp.StdoutTruncated)
	}
	if string(resp.Stderr) != "err\n" || resp.StderrTruncated {
		t.Fatalf("stderr %q truncated %v", resp.Stderr, resp.StderrTruncated)
	}
}
