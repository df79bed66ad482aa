package provision

import (
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestIdleTimeout(t *testing.T) {
	d := func(v time.Duration) *sandbox.Duration { s := sandbox.Duration(v); return &s }
	for _, tc := range []struct {
		in   *sandbox.Duration
		want time.Duration
		err  string
	}{
		{nil, DefaultIdleTimeout, ""},
		{d(5 * time.Minute), 5 * time.Minute, ""},
		{d(0), DefaultIdleTimeout, `must be a positive duration such as "30m", got 0s`},
		{d(-time.Second), DefaultIdleTimeout, `must be a positive duration such as "30m", got -1s`},
	} {
		got, err := IdleTimeout(tc.in)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("IdleTimeout(%v) = %v, %v; want %v, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}
