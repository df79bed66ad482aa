package wire

import "testing"

func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		foldTop bool
		want    string // "" for none
	}{
		{`{"allow":true}`, true, ""},
		{`{"allow":false,"allow":true}`, false, "allow"},
		{`{"allow":false,"Allow":true}`, true, "Allow"},
		{`{"allow":false,"Allow":true}`, false, ""},
		{`{"a":{"b":1,"b":2}}`, false, "b"},
		{`{"a":{"b":1,"B":2}}`, true, ""}, // folding is for the top level only
		{`{"a":[{"k":1},{"k":2}],"b":[{"x":1,"y":{"x":2}}]}`, false, ""},
		{`{"a":[{"k":1,"k":2}]}`, false, "k"},
		{`{"a":{},"b":[],"c":{"d":[1,{"e":null}]},"a":0}`, false, "a"},
		{`[{"a":1},{"a":1}]`, false, ""},
		{`{"\u0061":1,"a":2}`, false, "a"}, // the same key, escaped
		{`"allow"`, true, ""},
	} {
		got, found := duplicateKey([]byte(tc.doc), tc.foldTop)
		if found != (tc.want != "") || got != tc.want {
			t.Errorf("duplicateKey(%s, fold %v) = %q, %v; want %q", tc.doc, tc.foldTop, got, found, tc.want)
		}
	}
}
