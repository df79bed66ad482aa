package wire

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// manyMessages is a provider request of n short messages: its skeleton
// is the document itself.
func manyMessages(n int) string {
	var b strings.Builder
	b.WriteString(`{"ProviderID":"openai","Model":"gpt-4o","Messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":"message %d \u00e9 \ud83d\ude00","meta":{"k":%d}}`, i, i)
	}
	b.WriteString(`],"Round":1}`)
	return b.String()
}

// BenchmarkDecodeInput decodes the two shapes of a large input: one long
// string (the skeleton is small) and many short messages (the skeleton is
// the document), each the way hook run and exec's callers decode it.
func BenchmarkDecodeInput(b *testing.B) {
	for _, doc := range []struct{ name, body string }{
		{"long_string", `{"request":{"ProviderID":"openai","Model":"gpt-4o","Messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum \\n ", 1<<16) + `"}],"Round":1,"Metadata":{"tenant":"acme"}}}`},
		{"many_messages", `{"request":` + manyMessages(2000) + `}`},
	} {
		b.Run(doc.name, func(b *testing.B) {
			data := []byte(doc.body)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeInput(HookProvider, PhaseBeforeCall, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFoldWalk is the cost of the case-folded duplicate check on
// its own, beside the scanner's pass over the same request: it runs on
// every payload object DecodeInput decodes.
func BenchmarkFoldWalk(b *testing.B) {
	req := []byte(manyMessages(2000))
	b.SetBytes(int64(len(req)))
	b.Run("fold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if d := foldedDuplicate(req, reflect.TypeFor[ProviderRequest]()); d != nil {
				b.Fatal(d)
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := scanDocument(req, elideOver); !ok {
				b.Fatal("rejected")
			}
		}
	})
}
