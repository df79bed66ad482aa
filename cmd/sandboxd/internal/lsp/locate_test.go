package lsp

import (
	"strings"
	"testing"
)

const goSource = `package p

// Hello is mentioned here, "Hello" in a string too.
func Hello() string { return "Hello" }

type T struct{}

func (t *T) Close() error { return nil }

type U struct{}

func (u U) Close() error { return nil }

func use() { Hello(); x := Hello; _ = x }
`

func TestLocate(t *testing.T) {
	for _, c := range []struct {
		name, lang, src, symbol string
		line                    int
		want                    Spot
		note, err               string
	}{
		{"declaration over uses", Go, goSource, "Hello", 0, Spot{3, 5}, "", ""},
		{"on the given line", Go, goSource, "Hello", 14, Spot{13, 13}, "", ""},
		{"not on that line", Go, goSource, "Hello", 2, Spot{}, "", "Hello does not occur on line 2; it does on lines 4, 14"},
		{"two declarations", Go, goSource, "Close", 0, Spot{}, "", "Close is declared more than once in this file (lines 8, 12): pass line to say which"},
		{"qualified", Go, goSource, "U.Close", 0, Spot{11, 11}, "", ""},
		{"comments and strings skipped", Go, "package p\n// Only here\nvar s = \"Only\"\n", "Only", 0, Spot{}, "", "Only does not occur in this file (outside comments and strings)"},
		{"part of a longer name", Go, "package p\nvar HelloWorld = 1\n", "Hello", 0, Spot{}, "", "does not occur"},
		{"uses only", Go, "package p\nfunc f() { g(); g() }\n", "g", 0, Spot{1, 11}, "took the first of 2 occurrences (line 2); pass line to pick another", ""},
		{"not an identifier", Go, goSource, "a b", 0, Spot{}, "", `symbol "a b" is not an identifier`},
		{"python def", Python, "from m import f\n\n\ndef f():  # f\n    pass\n", "f", 0, Spot{3, 4}, "", ""},
		{"python assignment", Python, "X = 1\nprint(X)\n", "X", 0, Spot{0, 0}, "", ""},
		{"non-ASCII before", Go, "package p\nvar s, Ünï = \"é\", 1\n", "Ünï", 0, Spot{1, 7}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, note, err := Locate([]byte(c.src), c.lang, c.symbol, c.line)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Locate = %v, %v; want error %q", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want || note != c.note {
				t.Fatalf("Locate = %v, %q, %v; want %v, %q", got, note, err, c.want, c.note)
			}
		})
	}
}
