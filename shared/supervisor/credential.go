package supervisor

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// FormatCredential writes cred as UID:GID[:GROUP,GROUP...], the form
// NameAs takes on its command line.
func FormatCredential(cred *syscall.Credential) string {
	s := strconv.FormatUint(uint64(cred.Uid), 10) + ":" + strconv.FormatUint(uint64(cred.Gid), 10)
	if len(cred.Groups) > 0 {
		groups := make([]string, len(cred.Groups))
		for i, g := range cred.Groups {
			groups[i] = strconv.FormatUint(uint64(g), 10)
		}
		s += ":" + strings.Join(groups, ",")
	}
	return s
}

// ParseCredential reads what FormatCredential wrote. The supplementary
// groups are exactly those listed: none when there are none, never the
// supervisor's own.
func ParseCredential(s string) (*syscall.Credential, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("credential %q: want UID:GID[:GROUPS]", s)
	}
	id := func(v string) (uint32, error) {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("credential %q: %q is not a numeric ID", s, v)
		}
		return uint32(n), nil
	}
	cred := &syscall.Credential{Groups: []uint32{}}
	var err error
	if cred.Uid, err = id(parts[0]); err != nil {
		return nil, err
	}
	if cred.Gid, err = id(parts[1]); err != nil {
		return nil, err
	}
	if len(parts) == 3 && parts[2] != "" {
		for _, g := range strings.Split(parts[2], ",") {
			n, err := id(g)
			if err != nil {
				return nil, err
			}
			cred.Groups = append(cred.Groups, n)
		}
	}
	return cred, nil
}
