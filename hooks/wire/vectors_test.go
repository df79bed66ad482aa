package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// vector is one line of testdata/exec-hook-vectors.jsonl: stdin is exactly
// what PromptKit wrote to a hook.
type vector struct {
	Name  string          `json:"name"`
	Stdin json.RawMessage `json:"stdin"`
}

func loadVectors(tb testing.TB) []vector {
	tb.Helper()
	f, err := os.Open("testdata/exec-hook-vectors.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v vector
		if err := json.Unmarshal(line, &v); err != nil {
			tb.Fatalf("vector %d: %v", len(vs)+1, err)
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(vs) == 0 {
		tb.Fatal("no vectors")
	}
	return vs
}

// hookPhaseOf reads the envelope's hook and phase; eval stdin has no
// envelope, so a document without "hook" is an eval result.
func hookPhaseOf(tb testing.TB, stdin []byte) (hook, phase string) {
	tb.Helper()
	var env struct {
		Hook  *string `json:"hook"`
		Phase string  `json:"phase"`
	}
	if err := json.Unmarshal(stdin, &env); err != nil {
		tb.Fatal(err)
	}
	if env.Hook == nil {
		return HookEval, ""
	}
	return *env.Hook, env.Phase
}

func TestVectorsRoundTrip(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			hook, phase := hookPhaseOf(t, v.Stdin)
			p, err := DecodeInput(hook, phase, v.Stdin)
			if err != nil {
				t.Fatalf("DecodeInput(%q, %q): %v", hook, phase, err)
			}
			got, err := p.Stdin()
			if err != nil {
				t.Fatalf("Stdin: %v", err)
			}
			if !bytes.Equal(got, v.Stdin) {
				t.Errorf("re-encoded stdin differs from PromptKit's\n got: %s\nwant: %s", got, v.Stdin)
			}
		})
	}
}

// TestVectorsCoverEveryCall guards the round-trip test itself: it proves
// something only if the vectors reach every hook type and phase.
func TestVectorsCoverEveryCall(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range loadVectors(t) {
		hook, phase := hookPhaseOf(t, v.Stdin)
		seen[callName(hook, phase)] = true
	}
	for _, hook := range HookTypes() {
		phases, _ := Phases(hook)
		if len(phases) == 0 {
			phases = []string{""}
		}
		for _, phase := range phases {
			if !seen[callName(hook, phase)] {
				t.Errorf("no vector for %s", callName(hook, phase))
			}
		}
	}
}
