package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The reference codegen sandbox (github.com/AltairaLabs/CodeGen-Sandbox,
// its cmd/sandbox), which issue 34 holds sandboxd's calls to, is not on
// any path a clean clone has: the BenchmarkCall rows add it only when
// $CODEGEN_SANDBOX_SRC names a checkout of it, which they build once
// with go build. Its figures then come in the same run as ours and the
// floor's, interleaved with ours call by call (ref-ns/op, x-ref).
//
//	git clone https://github.com/AltairaLabs/CodeGen-Sandbox /tmp/ref
//	CODEGEN_SANDBOX_SRC=/tmp/ref go test -run '^$' -bench BenchmarkCall -count 5 ./cmd/sandboxd/
const envReferenceSrc = "CODEGEN_SANDBOX_SRC"

var (
	referenceOnce sync.Once
	referenceBin  string
	referenceErr  error
)

// buildReference builds the reference's server from $CODEGEN_SANDBOX_SRC
// once per test binary; "" and the reason when it cannot.
func buildReference() (string, error) {
	referenceOnce.Do(func() {
		src := os.Getenv(envReferenceSrc)
		if src == "" {
			referenceErr = fmt.Errorf("$%s is not set", envReferenceSrc)
			return
		}
		dir, err := os.MkdirTemp("", "refsandbox-")
		if err != nil {
			referenceErr = err
			return
		}
		bin := filepath.Join(dir, "sandbox")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/sandbox")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			referenceErr = fmt.Errorf("go build ./cmd/sandbox in %s: %v\n%s", src, err, out)
			return
		}
		referenceBin = bin
	})
	return referenceBin, referenceErr
}

// referenceSession starts the reference serving dir on loopback and
// connects to it over SSE, its transport, with the official client; nil,
// logged, when there is no reference to run, so that a row runs without
// it.
func referenceSession(b *testing.B, dir string) *mcp.ClientSession {
	b.Helper()
	bin, err := buildReference()
	if err != nil {
		b.Logf("no reference sandbox in this run: %v", err)
		return nil
	}
	// A port picked by the kernel, then handed over: the reference takes
	// an address, not a listener.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command(bin, "-addr", addr, "-workspace", dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	endpoint := "http://" + addr + "/sse"
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the reference sandbox did not listen on %s", addr)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	// The SSE stream lives on this context: it must outlive the calls.
	cs, err := client.Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: http.DefaultClient}, nil)
	if err != nil {
		b.Fatalf("connect to the reference sandbox: %v", err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// referenceCall is a row's call to the reference, or nil without one.
func referenceCall(cs *mcp.ClientSession, call func(b *testing.B, cs *mcp.ClientSession, n int)) benchCall {
	if cs == nil {
		return nil
	}
	return func(b *testing.B, n int) { call(b, cs, n) }
}
