package lockfile

import (
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
)

// Verify checks the plugin file at path, which discovery found as plugin
// name at version v, against the lock: it returns nil when the file's
// SHA-256 is the one recorded, a *MismatchError when it differs, and a
// *NotLockedError when the lock has no entry for that name and version.
// It hashes the whole file, so call it once per launch, right before it.
//
// A nil *Lock stands for "no lock file" and verifies everything.
func (l *Lock) Verify(name string, v *version.Version, path string) error {
	return l.verify(name, v, path, func() (string, error) { return discovery.SHA256(path) })
}

// VerifyFile is Verify of the file f, opened from path: what is checked
// is the very file a caller goes on to run through f, whatever is at
// path by then. f is read from its current offset to its end.
func (l *Lock) VerifyFile(name string, v *version.Version, path string, f *os.File) error {
	return l.verify(name, v, path, func() (string, error) { return discovery.SHA256Of(f) })
}

func (l *Lock) verify(name string, v *version.Version, path string, hash func() (string, error)) error {
	if l == nil {
		return nil
	}
	ver := versionString(v)
	e, ok := l.find(name, ver)
	if !ok {
		nl := &NotLockedError{Name: name, Version: ver, Path: path}
		for _, e := range l.Plugins {
			if e.Name == name {
				nl.Locked = append(nl.Locked, e.Version)
			}
		}
		return nl
	}
	sum, err := hash()
	if err != nil {
		return fmt.Errorf("verify plugin %s %s: %w", name, ver, err)
	}
	if sum != e.SHA256 {
		return &MismatchError{Name: name, Version: ver, Path: path, Want: e.SHA256, Got: sum}
	}
	return nil
}

// MismatchError is a plugin binary whose SHA-256 differs from the one the
// lock file records for its name and version: it was replaced or altered
// since the lock was written.
type MismatchError struct {
	Name, Version, Path string
	Want                string // recorded in the lock file
	Got                 string // of the file on disk
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("plugin %s %s at %s: SHA-256 %s does not match the lock file's %s; if you upgraded it on purpose, run promptkit-sandbox plugins lock",
		e.Name, e.Version, e.Path, short(e.Got), short(e.Want))
}

// NotLockedError is a plugin the lock file has no entry for.
type NotLockedError struct {
	Name, Version, Path string
	// Locked are the versions of Name the lock file does record, if any:
	// usually the plugin was upgraded and the lock not refreshed.
	Locked []string
}

func (e *NotLockedError) Error() string {
	var also string
	if len(e.Locked) > 0 {
		also = fmt.Sprintf(" (it locks %s %s)", e.Name, strings.Join(e.Locked, ", "))
	}
	return fmt.Sprintf("plugin %s %s at %s is not in the lock file%s; run promptkit-sandbox plugins lock",
		e.Name, e.Version, e.Path, also)
}

// short abbreviates a hex digest for messages; the error's fields keep it
// whole.
func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12] + "…"
	}
	return sum
}
