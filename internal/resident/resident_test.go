package resident

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// pair is a resident served in-process over pipes and its client.
type pair struct {
	client *Client
	toSrv  *io.PipeWriter
	served chan error
}

func start(t *testing.T) *pair {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pair{client: NewClient(outR, inW), toSrv: inW, served: make(chan error, 1)}
	go func() {
		err := Serve(inR, outW)
		outW.CloseWithError(io.EOF)
		p.served <- err
	}()
	t.Cleanup(func() { p.stop(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pid, err := p.client.Ready(ctx)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("Ready: pid %d, %v", pid, err)
	}
	return p
}

// stop ends the resident's input, as a closed session would, and waits
// for Serve to return.
func (p *pair) stop(t *testing.T) {
	t.Helper()
	p.toSrv.Close()
	select {
	case err := <-p.served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		p.served <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its input ended")
	}
}

func run(t *testing.T, c *Client, call Call) (Result, string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := c.Run(context.Background(), call, &out, &errb)
	return res, out.String(), errb.String(), err
}

func TestRunStdio(t *testing.T) {
	p := start(t)
	res, out, errs, err := run(t, p.client, Call{
		Command: "/bin/sh", Args: []string{"-c", `cat; echo "to err" >&2; exit 3`},
		Stdin: []byte("hello\x00world"),
	})
	if err != nil || res.Code != 3 || out != "hello\x00world" || errs != "to err\n" {
		t.Fatalf("got %+v %q %q %v", res, out, errs, err)
	}
}

func TestRunEnvAndPath(t *testing.T) {
	p := start(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "only-here")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$GREETING\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The call's PATH is the one searched, not the resident's.
	_, out, _, err := run(t, p.client, Call{Command: "only-here", Env: []string{"GREETING=hi there", "PATH=" + dir + ":/usr/bin:/bin"}})
	if err != nil || out != "hi there\n" {
		t.Fatalf("got %q, %v", out, err)
	}
	// The resident's own environment is the base.
	t.Setenv("RESIDENT_BASE", "kept")
	_, out, _, err = run(t, p.client, Call{Command: "/bin/sh", Args: []string{"-c", `echo "$RESIDENT_BASE"`}})
	if err != nil || out != "kept\n" {
		t.Fatalf("got %q, %v", out, err)
	}
}

func TestRunNotFound(t *testing.T) {
	p := start(t)
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"no-such-command-here", "/no/such/file", plain} {
		_, _, _, err := run(t, p.client, Call{Command: cmd})
		if sandbox.KindOf(err) != sandbox.KindStart || !strings.Contains(err.Error(), "not found (or not executable)") {
			t.Errorf("%s: got %v", cmd, err)
		}
	}
}

func TestRunSignal(t *testing.T) {
	p := start(t)
	res, _, _, err := run(t, p.client, Call{Command: "/bin/sh", Args: []string{"-c", "kill -SEGV $$"}})
	if err != nil || res.Code != 139 || res.Signal == "" {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestRunOutputLimit(t *testing.T) {
	p := start(t)
	res, out, _, err := run(t, p.client, Call{Command: "head", Args: []string{"-c", "3000000", "/dev/zero"}, OutputLimit: 1 << 20})
	if err != nil || len(out) != 1<<20 || !res.StdoutTruncated || res.StderrTruncated {
		t.Fatalf("got %d bytes, %+v, %v", len(out), res, err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB through stdin and back
	res, out, _, err = run(t, p.client, Call{Command: "cat", Stdin: big, OutputLimit: 32 << 20})
	if err != nil || out != string(big) || res.StdoutTruncated {
		t.Fatalf("16 MiB: got %d bytes, %+v, %v", len(out), res, err)
	}
}

func TestRunConcurrent(t *testing.T) {
	p := start(t)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() {
			in := fmt.Sprintf("call %d\n", i)
			res, out, serr, err := run(t, p.client, Call{Command: "/bin/sh", Args: []string{"-c", fmt.Sprintf("cat; echo %d >&2; exit %d", i, i%5)}, Stdin: []byte(in)})
			if err != nil || out != in || serr != fmt.Sprintf("%d\n", i) || res.Code != i%5 {
				errs <- fmt.Errorf("call %d: %+v %q %q %v", i, res, out, serr, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// pidsOf starts a call that records its PIDs in a file, one of them in a
// session of its own, and returns them once all are written.
func treeCall(t *testing.T, file string) Call {
	t.Helper()
	return Call{Command: "/bin/sh", Args: []string{"-c",
		`sleep 301 & echo $! >> ` + file + `; setsid sleep 302 & echo $! >> ` + file + `; echo $$ >> ` + file + `; echo started; wait`}}
}

func TestRunCancelKillsTree(t *testing.T) {
	p := start(t)
	file := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		_, err := p.client.Run(ctx, treeCall(t, file), &out, io.Discard)
		done <- err
	}()
	ids := proctest.Identify(t, proctest.ReadPIDs(t, file, 3)...)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	proctest.AssertGone(t, ids...)
	// The client is still good for the next call.
	if _, out, _, err := run(t, p.client, Call{Command: "echo", Args: []string{"next"}}); err != nil || out != "next\n" {
		t.Fatalf("next call: %q, %v", out, err)
	}
}

func TestTimeoutBackstop(t *testing.T) {
	p := start(t)
	_, _, _, err := run(t, p.client, Call{Command: "sleep", Args: []string{"30"}, Timeout: 200 * time.Millisecond})
	if sandbox.KindOf(err) != sandbox.KindTimeout {
		t.Fatalf("got %v", err)
	}
}

// TestTimeoutBackstopKillsTree: the resident's own timeout, which fires
// when the plugin's kill never came, kills the whole tree, a child in a
// session of its own included.
func TestTimeoutBackstopKillsTree(t *testing.T) {
	p := start(t)
	file := filepath.Join(t.TempDir(), "pids")
	call := treeCall(t, file)
	call.Timeout = time.Second
	done := make(chan error, 1)
	go func() {
		_, _, _, err := run(t, p.client, call)
		done <- err
	}()
	ids := proctest.Identify(t, proctest.ReadPIDs(t, file, 3)...)
	select {
	case err := <-done:
		if sandbox.KindOf(err) != sandbox.KindTimeout || !strings.Contains(err.Error(), "timed out after 1s") {
			t.Fatalf("Run: %v, want the resident's timeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its timeout")
	}
	proctest.AssertGone(t, ids...)
}

func TestInputEndKillsEverything(t *testing.T) {
	p := start(t)
	file := filepath.Join(t.TempDir(), "pids")
	done := make(chan error, 1)
	go func() {
		_, err := p.client.Run(context.Background(), treeCall(t, file), io.Discard, io.Discard)
		done <- err
	}()
	ids := proctest.Identify(t, proctest.ReadPIDs(t, file, 3)...)
	p.stop(t)
	proctest.AssertGone(t, ids...)
	select {
	case err := <-done:
		// The resident reports the call killed before its stream ends, or
		// the stream ends first: either way the call failed.
		if err == nil {
			t.Fatal("Run succeeded after the resident was stopped")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the resident stopped")
	}
	if _, err := p.client.Run(context.Background(), Call{Command: "true"}, nil, nil); !errors.Is(err, ErrEnded) || sandbox.KindOf(err) != sandbox.KindTransport {
		t.Fatalf("after the end: %v", err)
	}
}

func TestFrameLimits(t *testing.T) {
	var buf bytes.Buffer
	if err := writeFrame(&buf, frame{kind: frameStdout, payload: make([]byte, maxPayload+1)}); err == nil {
		t.Fatal("oversized frame written")
	}
	hdr := []byte{frameStdout, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}
	if _, err := readFrame(bytes.NewReader(hdr)); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("oversized header: %v", err)
	}
	if _, err := readFrame(bytes.NewReader([]byte{frameStdout, 0, 0, 0, 1, 0, 0, 0, 5, 'a'})); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut frame: %v", err)
	}
}
