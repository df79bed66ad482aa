package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// scanSeeds are documents for the scanner's tests and fuzz targets.
var scanSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+3`, `true`, `null`, ` {"a" : [1, "x", {"b":null}] } `,
	`{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `{"\u0061":1,"a":2}`, `{"\ud800":1,"\udbff":2}`,
	`[{"k":1},{"k":2}]`, `{"a":1,"A":2}`,
	`{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `"\x"`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"x\ud83d\`,
	`"\u12"`, "\"a\tb\"", `{"a":1}x`, `[1 2]`, `{"a":1 "b":2}`, `"\/\b\f\n\r\t\"\\"`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":3}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17}`,
}

// checkScan compares the scanner on doc with encoding/json: the same
// documents valid, but for those with a lone surrogate escape, the same
// ones holding a key twice, and a skeleton that
// is valid JSON of the same shape.
func checkScan(t *testing.T, doc []byte) {
	t.Helper()
	valid := json.Valid(doc)
	if !utf8.Valid(doc) {
		// decodeInput rejects such a document before scanning it: keys
		// would compare as the bytes they are, not as a decoder reads them.
		lone := valid && loneSurrogate(doc) >= 0
		if got := (&scanner{data: doc}).document(); got != (valid && !lone) {
			t.Fatalf("scanner valid(%q) = %v, json.Valid %v, lone surrogate %v", doc, got, valid, lone)
		}
		return
	}
	dup, lone := false, false
	if valid {
		_, dup = duplicateKey(doc, false)
		lone = loneSurrogate(doc) >= 0
	}
	skel, ok := scanDocument(doc, 4)
	if ok != (valid && !dup && !lone) {
		t.Fatalf("scanDocument(%q) ok = %v; json.Valid %v, duplicate key %v, lone surrogate %v", doc, ok, valid, dup, lone)
	}
	if !ok {
		return
	}
	if _, ok := scanDocument(skel, 0); !ok {
		t.Fatalf("skeleton %q of %q does not scan", skel, doc)
	}
	var got, want any
	if err := json.Unmarshal(skel, &got); err != nil {
		t.Fatalf("skeleton %q of %q: %v", skel, doc, err)
	}
	if err := json.Unmarshal(doc, &want); err != nil {
		t.Fatal(err)
	}
	if !sameShape(got, want) {
		t.Fatalf("skeleton %q is not %q with long strings cut", skel, doc)
	}
	if whole, _ := scanDocument(doc, len(doc)+1); !bytes.Equal(whole, doc) {
		t.Fatalf("skeleton with nothing to elide = %q, want the document %q", whole, doc)
	}
	checkSplit(t, doc)
}

// sameShape reports whether skel is doc with some string values replaced
// by "".
func sameShape(skel, doc any) bool {
	switch d := doc.(type) {
	case string:
		// Whether a string counts as long depends on how the document
		// quotes it; TestScanSkeleton checks where the cut is.
		return skel == d || skel == ""
	case []any:
		s, ok := skel.([]any)
		if !ok || len(s) != len(d) {
			return false
		}
		for i := range d {
			if !sameShape(s[i], d[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		s, ok := skel.(map[string]any)
		if !ok || len(s) != len(d) {
			return false
		}
		for k := range d {
			if !sameShape(s[k], d[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(skel, doc)
}

// checkSplit compares objectMembers and arrayElements with encoding/json.
func checkSplit(t *testing.T, doc []byte) {
	t.Helper()
	var obj map[string]json.RawMessage
	members, ok := objectMembers(doc)
	if json.Unmarshal(doc, &obj) == nil && bytes.HasPrefix(bytes.TrimSpace(doc), []byte("{")) {
		if !ok || len(members) != len(obj) {
			t.Fatalf("objectMembers(%q) = %d members, %v; want %d", doc, len(members), ok, len(obj))
		}
		for _, m := range members {
			if !bytes.Equal(m.value, obj[m.key]) {
				t.Fatalf("objectMembers(%q): %q is %q, want %q", doc, m.key, m.value, obj[m.key])
			}
		}
	} else if ok {
		t.Fatalf("objectMembers(%q) ok for a non-object", doc)
	}
	var arr []json.RawMessage
	elems, ok := arrayElements(doc)
	if json.Unmarshal(doc, &arr) == nil && arr != nil {
		if !ok || len(elems) != len(arr) {
			t.Fatalf("arrayElements(%q) = %d elements, %v; want %d", doc, len(elems), ok, len(arr))
		}
		for i := range arr {
			if !bytes.Equal(elems[i], arr[i]) {
				t.Fatalf("arrayElements(%q)[%d] = %q, want %q", doc, i, elems[i], arr[i])
			}
		}
	} else if ok {
		t.Fatalf("arrayElements(%q) ok for a non-array", doc)
	}
}

func TestScanDocument(t *testing.T) {
	for _, doc := range scanSeeds {
		checkScan(t, []byte(doc))
	}
	for _, v := range loadVectors(t) {
		checkScan(t, v.Stdin)
	}
}

func TestScanSkeleton(t *testing.T) {
	doc := `{"long":"` + strings.Repeat("x", 300) + `","short":"abc","arr":["` + strings.Repeat("y", 300) +
		`",1],"` + strings.Repeat("k", 300) + `":"` + strings.Repeat("\\n", 200) + `"}`
	skel, ok := scanDocument([]byte(doc), elideOver)
	if !ok {
		t.Fatal("valid document rejected")
	}
	want := `{"long":"","short":"abc","arr":["",1],"` + strings.Repeat("k", 300) + `":""}`
	if string(skel) != want {
		t.Errorf("skeleton\n got: %s\nwant: %s", skel, want)
	}
}

func FuzzScanDocument(f *testing.F) {
	for _, doc := range scanSeeds {
		f.Add([]byte(doc))
	}
	for _, v := range loadVectors(f) {
		f.Add([]byte(v.Stdin))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkScan(t, doc)
	})
}

func BenchmarkScanDocument(b *testing.B) {
	doc := []byte(`{"request":{"Messages":[{"role":"user","content":"` + strings.Repeat("lorem ipsum \\n ", 1<<16) + `"}]}}`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := scanDocument(doc, elideOver); !ok {
			b.Fatal("rejected")
		}
	}
}
