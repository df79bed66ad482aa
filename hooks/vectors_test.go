package hooks

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
)

// TestWireVectorsReachHookByteForByte runs every PromptKit vector through
// the runtime into a real hook process that records its stdin, and
// requires the recorded bytes to equal what PromptKit itself writes.
func TestWireVectorsReachHookByteForByte(t *testing.T) {
	f, err := os.Open(filepath.Join("wire", "testdata", "exec-hook-vectors.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var v struct {
			Name  string          `json:"name"`
			Stdin json.RawMessage `json:"stdin"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("vector line %d: %v", n+1, err)
		}
		n++
		t.Run(v.Name, func(t *testing.T) { runVector(t, v.Stdin) })
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 12 {
		t.Fatalf("read %d vectors, want at least 12", n)
	}
}

func runVector(t *testing.T, want []byte) {
	var head struct{ Hook, Phase string }
	if err := json.Unmarshal(want, &head); err != nil {
		t.Fatal(err)
	}
	hookType := head.Hook
	if hookType == "" {
		hookType = wire.HookEval
	}
	p, err := wire.DecodeInput(hookType, head.Phase, want)
	if err != nil {
		t.Fatalf("DecodeInput: %v", err)
	}

	dir := t.TempDir()
	recorded := filepath.Join(dir, "stdin")
	script := writeScript(t, dir, "record.sh", `cat > `+recorded+`; echo '{"allow": true}'`)
	entry := "rec:\n  command: " + script + "\n  hook: " + hookType + "\n"
	if hookType != wire.HookEval {
		entry += "  phases: [" + head.Phase + "]\n"
	}
	rt, err := Load(writeConfig(t, "", entry), Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := rt.Run(context.Background(), p)
	if err != nil || !d.Allow {
		t.Fatalf("Run = %+v, %v", d, err)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatalf("hook did not run: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("hook stdin differs from PromptKit's bytes\n got %s\nwant %s", got, want)
	}
}
