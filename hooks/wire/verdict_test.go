package wire

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseVerdictAccepts(t *testing.T) {
	tests := []struct {
		name, out string
		want      Verdict
	}{
		{"allow", `{"allow":true}`, Verdict{Allow: true}},
		{"deny with reason", `{"allow":false,"reason":"PII found"}`, Verdict{Reason: "PII found"}},
		{"every key", `{"allow":false,"reason":"r","enforced":true,"ack":true,"metadata":{"n":2,"s":"x","l":[true]}}`,
			Verdict{Reason: "r", Enforced: true, Ack: true, Metadata: map[string]any{"n": 2.0, "s": "x", "l": []any{true}}}},
		{"surrounding whitespace", " \n\t{\"allow\": true}\r\n\n", Verdict{Allow: true}},
		{"unknown keys tolerated", `{"allow":true,"confidence":0.9,"extra":{"x":1}}`, Verdict{Allow: true}},
		{"null optional keys", `{"allow":true,"reason":null,"enforced":null,"ack":null,"metadata":null}`, Verdict{Allow: true}},
		{"escaped reason", `{"allow":false,"reason":"\u003cb\u003e \"quoted\""}`, Verdict{Reason: `<b> "quoted"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVerdict([]byte(tt.out))
			if err != nil {
				t.Fatalf("ParseVerdict: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseVerdictRejects(t *testing.T) {
	tests := []struct {
		name, out string
		is        error
		msg       string
	}{
		{"nothing", ``, ErrEmptyVerdict, "hook printed no verdict"},
		{"only whitespace", " \n\t ", ErrEmptyVerdict, "hook printed no verdict"},
		{"not JSON", `allow`, ErrInvalidVerdict,
			"invalid hook verdict: invalid JSON at line 1, column 1: invalid character 'a' looking for beginning of value"},
		{"truncated", `{"allow": tr`, ErrInvalidVerdict,
			"invalid hook verdict: invalid JSON at line 1, column 12: unexpected end of JSON input"},
		{"broken on a later line", "{\n\"allow\": true,\n}", ErrInvalidVerdict,
			"invalid hook verdict: invalid JSON at line 3, column 1: invalid character '}' looking for beginning of object key string"},
		{"trailing data", "{\"allow\":true}\nok", ErrInvalidVerdict,
			`invalid hook verdict: unexpected data after the JSON value: "ok"`},
		{"two objects", `{"allow":true}{"allow":false}`, ErrInvalidVerdict,
			`invalid hook verdict: unexpected data after the JSON value: "{\"allow\":false}"`},
		{"array", `[{"allow":true}]`, ErrInvalidVerdict, "invalid hook verdict: want a JSON object, got an array"},
		{"bare true", `true`, ErrInvalidVerdict, "invalid hook verdict: want a JSON object, got a boolean"},
		{"null", `null`, ErrInvalidVerdict, "invalid hook verdict: want a JSON object, got null"},
		{"no allow", `{"reason":"fine"}`, ErrNoAllow, `hook verdict has no "allow" key`},
		{"empty object", `{}`, ErrNoAllow, `hook verdict has no "allow" key`},
		{"allow misspelt", `{"Allow":true}`, ErrNoAllow, `hook verdict has no "allow" key`},
		{"allow twice", `{"allow":false,"allow":true}`, ErrInvalidVerdict,
			`invalid hook verdict: key "allow" appears twice in one object (keys of the verdict itself count as the same regardless of case)`},
		{"allow twice, cased", `{"allow":false,"Allow":true}`, ErrInvalidVerdict,
			`invalid hook verdict: key "Allow" appears twice in one object (keys of the verdict itself count as the same regardless of case)`},
		{"reason twice", `{"allow":false,"reason":"a","reason":"b"}`, ErrInvalidVerdict,
			`invalid hook verdict: key "reason" appears twice in one object (keys of the verdict itself count as the same regardless of case)`},
		{"metadata key twice", `{"allow":true,"metadata":{"n":1,"n":2}}`, ErrInvalidVerdict,
			`invalid hook verdict: key "n" appears twice in one object (keys of the verdict itself count as the same regardless of case)`},
		{"allow string", `{"allow":"true"}`, ErrInvalidVerdict,
			`invalid hook verdict: allow must be a boolean (true or false), got "true" (a string)`},
		{"allow number", `{"allow":1}`, ErrInvalidVerdict,
			`invalid hook verdict: allow must be a boolean (true or false), got 1 (a number)`},
		{"allow null", `{"allow":null}`, ErrInvalidVerdict,
			`invalid hook verdict: allow must be a boolean (true or false), got null (null)`},
		{"allow object", `{"allow":{"ok": true}}`, ErrInvalidVerdict,
			`invalid hook verdict: allow must be a boolean (true or false), got {"ok":true} (an object)`},
		{"enforced string", `{"allow":false,"enforced":"yes"}`, ErrInvalidVerdict,
			`invalid hook verdict: enforced must be a boolean (true or false), got "yes" (a string)`},
		{"ack number", `{"allow":true,"ack":0}`, ErrInvalidVerdict,
			`invalid hook verdict: ack must be a boolean (true or false), got 0 (a number)`},
		{"reason number", `{"allow":false,"reason":42}`, ErrInvalidVerdict,
			"invalid hook verdict: reason must be a string, got a number"},
		{"metadata array", `{"allow":false,"metadata":["a"]}`, ErrInvalidVerdict,
			"invalid hook verdict: metadata must be an object, got an array"},
		{"metadata string", `{"allow":false,"metadata":"a=b"}`, ErrInvalidVerdict,
			"invalid hook verdict: metadata must be an object, got a string"},
		{"metadata number out of range", `{"allow":false,"metadata":{"n":1e400}}`, ErrInvalidVerdict,
			"invalid hook verdict: metadata: json: cannot unmarshal number 1e400 into Go value of type float64"},
		{"long value clipped", `{"allow":"` + "0123456789012345678901234567890123456789abcdef" + `"}`, ErrInvalidVerdict,
			`invalid hook verdict: allow must be a boolean (true or false), got "012345678901234567890123456789012345678... (a string)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ParseVerdict([]byte(tt.out))
			if err == nil {
				t.Fatalf("ParseVerdict = %+v, want error", v)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if err.Error() != tt.msg {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.msg)
			}
			if !reflect.DeepEqual(v, Verdict{}) {
				t.Errorf("partial verdict returned with the error: %+v", v)
			}
		})
	}
}

// TestParseVerdictQuoting: every piece of stdout an error quotes reaches
// the Quoter whole, with the length to cut it to, and what it returns is
// what the message shows.
func TestParseVerdictQuoting(t *testing.T) {
	const secret = "SECRET-VALUE"
	pad := strings.Repeat("a", 36) // the secret straddles byte 40 of each piece
	var pieces []string
	quote := func(piece []byte, n int) (string, bool) {
		pieces = append(pieces, string(piece))
		if n != 40 {
			t.Errorf("quoter asked for %d bytes, want 40", n)
		}
		return clip([]byte(strings.ReplaceAll(string(piece), secret, "[X]")), n)
	}
	tests := []struct{ out, piece, msg string }{
		{`{"allow":true} ` + pad + secret, pad + secret,
			`invalid hook verdict: unexpected data after the JSON value: "` + pad + `[X]"`},
		{`{"allow":true} ` + pad + "  " + secret + " and more", pad + "  " + secret + " and more",
			`invalid hook verdict: unexpected data after the JSON value: "` + pad + `  [X..."`},
		{`{"allow": "` + pad + secret + `"}`, `"` + pad + secret + `"`,
			`invalid hook verdict: allow must be a boolean (true or false), got "` + pad + `[X]... (a string)`},
		{`{"allow": true, "ack": {"k": "` + secret + `"}}`, `{"k":"` + secret + `"}`,
			`invalid hook verdict: ack must be a boolean (true or false), got {"k":"[X]"} (an object)`},
	}
	for _, tt := range tests {
		pieces = nil
		_, err := ParseVerdictQuoting([]byte(tt.out), quote)
		if err == nil || err.Error() != tt.msg {
			t.Errorf("%s:\n got: %v\nwant: %s", tt.out, err, tt.msg)
		}
		if len(pieces) != 1 || pieces[0] != tt.piece {
			t.Errorf("%s: quoter got %q, want [%q]", tt.out, pieces, tt.piece)
		}
	}
}
