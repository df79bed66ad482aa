package direct

import (
	"bytes"
	"context"
	"os/exec"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// benchRequest is the size and shape of a typical provider-hook request.
var benchRequest = bytes.Repeat([]byte(`{"hook":"provider","phase":"before_call","request":{"ProviderID":"openai"}}`), 12)

const benchVerdict = `{"allow":true}` + "\n"

// BenchmarkExecBaseline is the floor: os/exec as anyone would write it.
func BenchmarkExecBaseline(b *testing.B) {
	hook := hookBinary(b)
	for b.Loop() {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(hook)
		cmd.Stdin = bytes.NewReader(benchRequest)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		if stdout.String() != benchVerdict {
			b.Fatalf("stdout = %q", stdout.String())
		}
	}
}

// BenchmarkDirectSpawn is the same call through the direct sandbox; the
// difference to ExecBaseline is what process groups, timeouts, caps and
// the typed result cost.
func BenchmarkDirectSpawn(b *testing.B) {
	hook := hookBinary(b)
	sb := New("bench", shell.Options{})
	ctx := context.Background()
	req := sandbox.Request{Command: hook, Stdin: benchRequest}
	for b.Loop() {
		resp, err := sb.Spawn(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if string(resp.Stdout) != benchVerdict {
			b.Fatalf("stdout = %q", resp.Stdout)
		}
	}
}
