package supervisor

import (
	"slices"
	"syscall"
	"testing"
)

func TestCredentialRoundTrip(t *testing.T) {
	for _, c := range []*syscall.Credential{
		{Uid: 1000, Gid: 1000, Groups: []uint32{}},
		{Uid: 65534, Gid: 65533, Groups: []uint32{4, 27, 100}},
	} {
		got, err := ParseCredential(FormatCredential(c))
		if err != nil || got.Uid != c.Uid || got.Gid != c.Gid || !slices.Equal(got.Groups, c.Groups) {
			t.Errorf("%+v: got %+v, %v", c, got, err)
		}
	}
	for _, bad := range []string{"", "1000", "a:b", "1:2:3:4", "1:2:x", "-1:2", "99999999999:1"} {
		if _, err := ParseCredential(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
