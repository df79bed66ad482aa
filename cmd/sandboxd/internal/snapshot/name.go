package snapshot

import (
	"errors"
	"fmt"
	"strings"
)

// MaxNameLen is the longest snapshot name an agent may give; automatic
// snapshots add a prefix and a time to it.
const MaxNameLen = 100

// MaxDescriptionLen bounds a snapshot's description, in bytes.
const MaxDescriptionLen = 4096

// ErrExists is a snapshot name already taken; ErrNotFound one no
// snapshot has.
var (
	ErrExists   = errors.New("a snapshot with this name already exists")
	ErrNotFound = errors.New("no snapshot has this name")
)

// NameError is a snapshot name refused: it would not make a plain git
// ref of its own.
type NameError struct {
	Name   string
	Reason string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("snapshot name %q: %s (a name is 1 to %d letters, digits, '.', '_' or '-', starting with a letter or digit)", quoteStart(e.Name), e.Reason, MaxNameLen)
}

// validName refuses anything but a simple name, so no name can reach
// another ref (../, refs/...), a reflog expression (@{...}), or a
// ref-lock file (.lock).
func validName(name string, max int) error {
	bad := func(reason string) error { return &NameError{Name: name, Reason: reason} }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > max:
		return bad("too long")
	case !alnum(name[0]):
		return bad("must start with a letter or digit")
	case strings.Contains(name, ".."):
		return bad(`contains ".."`)
	case strings.HasSuffix(name, "."), strings.HasSuffix(name, ".lock"):
		return bad(`ends in "." or ".lock"`)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return bad(fmt.Sprintf("character %q is not allowed", c))
		}
	}
	return nil
}

func alnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func validDescription(d string) error {
	if len(d) > MaxDescriptionLen {
		return fmt.Errorf("description is %d bytes; at most %d", len(d), MaxDescriptionLen)
	}
	if strings.ContainsRune(d, 0) {
		return errors.New("description contains a NUL byte")
	}
	return nil
}

// quoteStart is s, cut short for a message.
func quoteStart(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
