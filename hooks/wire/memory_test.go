package wire

import (
	"runtime"
	"strings"
	"testing"
)

// TestLargeInputAllocations bounds what decoding a large input and
// encoding its stdin allocate: the long string once when decoded and once
// in the stdin, plus a little. Encoding it twice over (as json.Marshal's
// growing buffers and the copies of json.Decoder and json.RawMessage
// did, several times) fails. Allocation totals do not depend on timing or
// on the collector, so the bound can be tight.
func TestLargeInputAllocations(t *testing.T) {
	if raceEnabled {
		// Under -race sync.Pool drops items at random, so encoding/json's
		// pooled buffers are allocated afresh and the totals mean nothing.
		// make test runs this test again without -race.
		t.Skip("allocation totals mean nothing under the race detector (make test runs it without)")
	}
	const size = 8 << 20
	doc := []byte(`{"request":{"ProviderID":"openai","Model":"gpt-4o","Messages":[{"role":"user","timestamp":"2026-04-15T12:00:00Z","content":"` +
		strings.Repeat("a", size) + `"}],"SystemPrompt":"You are a support agent.","Round":1,"Metadata":{"tenant":"acme"},"Replacement":""}}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := DecodeInput(HookProvider, PhaseBeforeCall, doc)
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := p.Stdin()
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.2f times the input", float64(allocated)/float64(len(doc)))
	if limit := uint64(2*len(doc) + 1<<20); allocated > limit {
		t.Errorf("decoding %d bytes and encoding them allocated %d bytes (%.1f times the input), want at most %d",
			len(doc), allocated, float64(allocated)/float64(len(doc)), limit)
	}
	if len(stdin) < size {
		t.Fatalf("stdin is %d bytes", len(stdin))
	}
}
