package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStartToInitialize times what a sandbox provisioned per agent
// session pays before its first call: from starting the built sandboxd
// on a loopback port with an empty workspace to the answer to the MCP
// initialize request of the official client (Connect returns once that
// answer is in and the initialized notification is sent). Teardown is
// not timed. The token comes from the environment in "sealed", as in a
// container, which makes sandboxd seal it (seal.go); in "generated"
// sandboxd makes its own and has nothing to seal.
func BenchmarkStartToInitialize(b *testing.B) {
	bin := binary(b)
	for _, c := range []struct {
		name string
		env  []string
	}{
		{"generated", nil},
		{"sealed", []string{"SANDBOXD_TOKEN=" + strings.Repeat("7", 64)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				startAndInitialize(b, bin, c.env)
			}
		})
	}
}

// startAndInitialize starts sandboxd, connects and initializes, with
// the timer running only from the start to the initialize answer.
func startAndInitialize(b *testing.B, bin string, env []string) {
	b.StopTimer()
	dir := b.TempDir()
	cmd := exec.Command(bin, "--addr", "127.0.0.1:0", "--workspace", dir)
	cmd.Env = append(append(os.Environ(), "SANDBOXD_LOG_LEVEL=warn"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	defer stopGracefully(b, cmd)
	token := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SANDBOXD_TOKEN="); ok {
			token = v
		}
	}
	b.StartTimer()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	url := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if _, tok, ok := strings.Cut(line, "(generated for this run; fix one with --token-file): "); ok {
			token = tok
		}
		if strings.HasPrefix(line, "  Token") {
			break // it follows the URLs
		}
		if _, u, ok := strings.Cut(line, "MCP (Streamable HTTP): "); ok {
			url = u
		}
	}
	if url == "" {
		b.Fatal("sandboxd announced no URL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "startup-bench", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1,
	}, nil)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	go io.Copy(io.Discard, stdout)
	if got := cs.InitializeResult(); got == nil || got.ServerInfo == nil || got.ServerInfo.Name == "" {
		b.Fatalf("initialize answered %+v", got)
	}
	_ = cs.Close()
}
