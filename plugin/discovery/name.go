package discovery

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"
)

// FilePrefix starts the file name of every plugin executable. The host's
// own binary is "promptkit-sandbox" (no trailing dash), so it never looks
// like a plugin even when plugins sit next to it.
const FilePrefix = "promptkit-sandbox-"

// ErrNotPluginFile is returned by ParseFileName for a name that does not
// start with FilePrefix: such files are ignored, not refused.
var ErrNotPluginFile = errors.New("not a plugin file name")

// DevVersion returns the version an unversioned plugin file counts as:
// 0.0.0, a development build, older than any release.
func DevVersion() *version.Version {
	return version.Must(version.NewVersion("0.0.0"))
}

// ParseFileName reads a plugin's name and version from a file's base name:
// "promptkit-sandbox-NAME" (version 0.0.0) or
// "promptkit-sandbox-NAME_vX.Y.Z[-PRERELEASE]".
//
// A name without FilePrefix gives ErrNotPluginFile. A name with the prefix
// that is otherwise malformed is a near miss, worth reporting: the error
// says what is wrong, and name is what stands where the plugin name should
// be, so the refused file can still be listed under it.
func ParseFileName(base string) (name string, v *version.Version, err error) {
	rest, ok := strings.CutPrefix(base, FilePrefix)
	if !ok {
		return "", nil, ErrNotPluginFile
	}
	// Plugin names cannot contain '_', so the first one starts the version.
	name, ver, versioned := strings.Cut(rest, "_")
	if err := checkName(name); err != nil {
		return name, nil, err
	}
	if !versioned {
		return name, DevVersion(), nil
	}
	v, err = parseFileVersion(ver)
	if err != nil {
		return name, nil, err
	}
	return name, v, nil
}

// checkName enforces the plugin name alphabet: lowercase letters, digits
// and '-', starting with a letter or digit.
func checkName(name string) error {
	if name == "" {
		return errors.New("missing plugin name after " + FilePrefix)
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r == '-' && i > 0:
		default:
			return fmt.Errorf("invalid plugin name %q: use lowercase letters, digits and '-', starting with a letter or digit", name)
		}
	}
	return nil
}

// parseFileVersion accepts exactly "vMAJOR.MINOR.PATCH[-PRERELEASE]" in
// canonical form. Being strict keeps one file name per version: "1.2",
// "1.02.0" and "1.2.0+build" would all compare equal to 1.2.0, and which
// of them "wins" would depend on directory order alone.
func parseFileVersion(s string) (*version.Version, error) {
	bad := func(why string) error {
		return fmt.Errorf("invalid version in file name: %q %s; want _vMAJOR.MINOR.PATCH[-PRERELEASE]", "_"+s, why)
	}
	digits, ok := strings.CutPrefix(s, "v")
	if !ok {
		return nil, bad("does not start with _v")
	}
	v, err := version.NewSemver(digits)
	if err != nil {
		return nil, bad("is not a semantic version")
	}
	switch {
	case v.Metadata() != "":
		return nil, bad("has build metadata")
	case len(v.Segments64()) != 3 || v.String() != digits:
		return nil, bad("is not in canonical form")
	}
	return v, nil
}
