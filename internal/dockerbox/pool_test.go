package dockerbox

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// poolTransports are the transports every pool test runs over.
var poolTransports = []string{TransportAPI, TransportCLI}

// forEachPoolTransport runs f as a parallel subtest per transport, with a
// config that has a pool of size.
func forEachPoolTransport(t *testing.T, size int, extra map[string]any, f func(t *testing.T, name string, sb *RunSandbox)) {
	for _, tr := range poolTransports {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			cfg := map[string]any{"transport": tr, "pool": size}
			for k, v := range extra {
				cfg[k] = v
			}
			name := uniqueName(t)
			f(t, name, openRun(t, name, cfg))
		})
	}
}

// running lists the IDs of the running containers of a sandbox.
func running(t *testing.T, name string) []string {
	t.Helper()
	out := docker(t, "ps", "-q", "--no-trunc", "--filter", "label="+LabelName+"="+name)
	return strings.Fields(out)
}

// waitWarm waits until n containers of the sandbox run (the pool is full)
// and returns their IDs.
func waitWarm(t *testing.T, name string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ids := running(t, name)
		if len(ids) >= n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool never filled: %d of %d containers running", len(ids), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// closeAndCheck closes the sandbox and checks nothing of it is left.
func closeAndCheck(t *testing.T, name string, sb *RunSandbox) {
	t.Helper()
	if err := sb.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertNoContainers(t, name)
}

// hostnameReq reads its stdin, as hooks do, before it prints the ID of
// its container: a warm container waits for the call.
var hostnameReq = sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "cat >/dev/null; hostname"}}

func TestRunPoolServesEachContainerOnce(t *testing.T) {
	t.Parallel()
	forEachPoolTransport(t, 2, nil, func(t *testing.T, name string, sb *RunSandbox) {
		seen := map[string]bool{}
		call := func() string {
			resp, err := sb.Spawn(ctxTimeout(t, time.Minute), hostnameReq)
			if err != nil {
				t.Fatalf("Spawn: %v (stderr %q)", err, resp.Stderr)
			}
			h := strings.TrimSpace(string(resp.Stdout))
			if seen[h] {
				t.Fatalf("container %s served two calls", h)
			}
			seen[h] = true
			return h
		}
		call() // cold: the pool starts filling
		for range 4 {
			warm := waitWarm(t, name, 2)
			h := call()
			if !slices.ContainsFunc(warm, func(id string) bool { return strings.HasPrefix(id, h) }) {
				t.Errorf("call ran in %s, not in a warm container (warm: %v)", h, warm)
			}
		}
		closeAndCheck(t, name, sb)
	})
}

func TestRunPoolStdinStdoutStderrEnvExitCode(t *testing.T) {
	t.Parallel()
	forEachPoolTransport(t, 2, map[string]any{"env": []any{"CFG=cfg"}}, func(t *testing.T, name string, sb *RunSandbox) {
		// Output written before the call's stdin arrives is the call's
		// too; each distinct environment is its own warm spec.
		for i := range 6 {
			if i > 0 {
				waitWarm(t, name, 2)
			}
			req := sandbox.Request{
				Command: "/bin/sh",
				Args:    []string{"-c", `echo "early $CFG $REQ"; cat; echo err >&2; exit 7`},
				Env:     []string{fmt.Sprintf("REQ=r%d", i%2)},
				Stdin:   []byte("stdin\n"),
			}
			resp, err := sb.Spawn(ctxTimeout(t, time.Minute), req)
			var xe *sandbox.ExitError
			if !errors.As(err, &xe) || xe.Code != 7 {
				t.Fatalf("call %d: err = %v, want exit 7", i, err)
			}
			if got, want := string(resp.Stdout), fmt.Sprintf("early cfg r%d\nstdin\n", i%2); got != want {
				t.Errorf("call %d: stdout %q, want %q", i, got, want)
			}
			if string(resp.Stderr) != "err\n" {
				t.Errorf("call %d: stderr %q", i, resp.Stderr)
			}
		}
		closeAndCheck(t, name, sb)
	})
}

func TestRunPoolConcurrentCalls(t *testing.T) {
	t.Parallel()
	// The test is about correctness under concurrency: the engine, busy
	// with the rest of the suite as well, gets the time it needs.
	forEachPoolTransport(t, 4, map[string]any{"timeout": "90s"}, func(t *testing.T, name string, sb *RunSandbox) {
		if _, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{
			Command: "/bin/sh", Args: []string{"-c", "hostname; cat"}, Stdin: []byte("warm-up"),
		}); err != nil {
			t.Fatal(err)
		}
		waitWarm(t, name, 4)
		const n = 32
		var wg sync.WaitGroup
		var mu sync.Mutex
		hosts := map[string]bool{}
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := sb.Spawn(ctxTimeout(t, 2*time.Minute), sandbox.Request{
					Command: "/bin/sh", Args: []string{"-c", "hostname; cat"}, Stdin: fmt.Appendf(nil, "call-%d", i),
				})
				host, rest, _ := strings.Cut(string(resp.Stdout), "\n")
				if err != nil || rest != fmt.Sprintf("call-%d", i) {
					t.Errorf("call %d: err %v stdout %q", i, err, resp.Stdout)
				}
				mu.Lock()
				defer mu.Unlock()
				if host != "" && hosts[host] {
					t.Errorf("container %s served two calls", host)
				}
				hosts[host] = true
			}()
		}
		wg.Wait()
		closeAndCheck(t, name, sb)
	})
}

func TestRunPoolLargeStdout(t *testing.T) {
	t.Parallel()
	const size = 32 << 20
	forEachPoolTransport(t, 1, map[string]any{"output_limit": size, "timeout": "60s"}, func(t *testing.T, name string, sb *RunSandbox) {
		for range 2 {
			resp, err := sb.Spawn(ctxTimeout(t, 2*time.Minute), sandbox.Request{
				Command: "/bin/sh", Args: []string{"-c", "yes 0123456789abcde | head -c 33554432"},
			})
			if err != nil {
				t.Fatalf("Spawn: %v", err)
			}
			if !bytes.Equal(resp.Stdout, bytes.Repeat([]byte("0123456789abcde\n"), size/16)) || resp.Truncated() {
				t.Fatalf("stdout: %d bytes, not the %d expected (truncated %v)", len(resp.Stdout), size, resp.Truncated())
			}
		}
		closeAndCheck(t, name, sb)
	})
}

func TestRunPoolCloseWithCallsOutstanding(t *testing.T) {
	t.Parallel()
	forEachPoolTransport(t, 3, nil, func(t *testing.T, name string, sb *RunSandbox) {
		// Close right after the first call, while the pool is filling.
		if _, err := sb.Spawn(ctxTimeout(t, time.Minute), hostnameReq); err != nil {
			t.Fatal(err)
		}
		closeAndCheck(t, name, sb)
	})
}
