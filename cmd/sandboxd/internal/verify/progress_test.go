package verify

import "testing"

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		ok         bool
	}{
		{`{"Time":"2026-01-01T00:00:00Z","Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`, "=== RUN   TestA", true},
		{`{"Time":"2026-01-01T00:00:00Z","Action":"run","Package":"p","Test":"TestA"}`, "", false},
		{`ok  	example.com/p	0.01s`, "ok  	example.com/p	0.01s", true},
		{`{"not": "an event"}`, `{"not": "an event"}`, true},
		{`{broken`, `{broken`, true},
	} {
		got, ok := progressLine([]byte(tc.line))
		if got != tc.want || ok != tc.ok {
			t.Errorf("progressLine(%q) = %q, %v; want %q, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}
