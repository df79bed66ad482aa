package shells

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTailMemoryIsBounded(t *testing.T) {
	h := newHeadTail(1001)
	var all bytes.Buffer
	chunk := make([]byte, 0, 70000)
	for i := 0; all.Len() < 10<<20; i++ {
		// Chunks of varied sizes, some larger than the tail.
		chunk = chunk[:(i*7919)%70000]
		for j := range chunk {
			chunk[j] = byte('a' + (all.Len()+j)%26)
		}
		all.Write(chunk)
		h.Write(chunk)
		if len(h.head) > 500 || cap(h.head) > 1001 || cap(h.tail) > 501 {
			t.Fatalf("after %d bytes: head %d/%d, tail cap %d", all.Len(), len(h.head), cap(h.head), cap(h.tail))
		}
	}
	c := h.clip()
	b := all.Bytes()
	if c.head != string(b[:500]) || c.tail != string(b[len(b)-501:]) || c.total != len(b) {
		t.Errorf("clip does not hold the head and tail of what was written")
	}
}

func TestHeadTailSmallOutputIsWhole(t *testing.T) {
	h := newHeadTail(100)
	h.Write([]byte("abc"))
	h.Write([]byte("def"))
	if got := h.clip().render(100); got != "abcdef" {
		t.Errorf("got %q", got)
	}
}

func TestRenderKeepsUTF8Valid(t *testing.T) {
	text := strings.Repeat("é", 1000) // two bytes each
	for budget := 1; budget < 20; budget++ {
		got := textClip(text).render(budget)
		if !utf8.ValidString(got) {
			t.Errorf("budget %d: invalid UTF-8 %q", budget, got)
		}
	}
	h := newHeadTail(101)
	h.Write([]byte(text))
	if got := h.clip().render(101); !utf8.ValidString(got) || !strings.Contains(got, "bytes elided") {
		t.Errorf("got %q", got)
	}
}

func TestFitSharesTheBudget(t *testing.T) {
	for _, tc := range []struct{ a, b, budget, wa, wb int }{
		{10, 10, 100, 10, 10},
		{1000, 5, 100, 95, 5},
		{5, 1000, 100, 5, 95},
		{1000, 1000, 100, 50, 50},
	} {
		a, b := textClip(strings.Repeat("a", tc.a)), textClip(strings.Repeat("b", tc.b))
		if wa, wb := fit(a, b, tc.budget); wa != tc.wa || wb != tc.wb {
			t.Errorf("%+v: got %d, %d", tc, wa, wb)
		}
	}
}
