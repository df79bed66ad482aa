package plugin

import (
	"bytes"
	"context"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The same direct backend in-process and through the plugin protocol
// (real server and client, a unix socket, the launch TLS): the difference
// is what the plugin hop costs per call.

var benchCases = []struct {
	name string
	req  sandbox.Request
}{
	{"hook", sandbox.Request{Command: "cat", Stdin: []byte(`{"hook":"provider","phase":"before_call","request":{"ProviderID":"openai"}}`)}},
	{"8MiB", sandbox.Request{Command: "cat", Stdin: bytes.Repeat([]byte("0123456789abcdef"), 8<<20/16)}},
}

func BenchmarkLocalSpawn(b *testing.B) {
	sb, err := direct.Factory(context.Background(), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) { benchSpawn(b, sb, bc.req) })
	}
}

func BenchmarkRemoteSpawn(b *testing.B) {
	h := startServer(b, nil)
	rs := h.open(b, "bench", "direct", nil)
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) { benchSpawn(b, rs, bc.req) })
	}
}

func benchSpawn(b *testing.B, sb sandbox.Sandbox, req sandbox.Request) {
	b.SetBytes(int64(len(req.Stdin)))
	for b.Loop() {
		resp, err := sb.Spawn(context.Background(), req)
		if err != nil || len(resp.Stdout) != len(req.Stdin) {
			b.Fatalf("%d bytes, %v", len(resp.Stdout), err)
		}
	}
}
