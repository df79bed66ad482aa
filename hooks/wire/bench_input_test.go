package wire

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecodeInput decodes the two shapes of a large input: one long
// string (the skeleton is small) and many short messages (the skeleton is
// the document), each the way hook run and exec's callers decode it.
func BenchmarkDecodeInput(b *testing.B) {
	var many strings.Builder
	for i := range 2000 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `{"role":"user","content":"message %d \u00e9 \ud83d\ude00","meta":{"k":%d}}`, i, i)
	}
	for _, doc := range []struct{ name, body string }{
		{"long_string", `{"request":{"ProviderID":"openai","Model":"gpt-4o","Messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum \\n ", 1<<16) + `"}],"Round":1,"Metadata":{"tenant":"acme"}}}`},
		{"many_messages", `{"request":{"ProviderID":"openai","Model":"gpt-4o","Messages":[` + many.String() + `],"Round":1}}`},
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
