// Package discovery finds plugin executables on disk, Terraform-style:
// files named promptkit-sandbox-NAME[_vX.Y.Z] in an ordered list of
// directories. It lists every candidate, usable or refused with the
// reason, and selects versions; it never runs anything.
package discovery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/hashicorp/go-version"
)

// Candidate is one plugin file found while scanning.
type Candidate struct {
	Name string
	// Version is 0.0.0 for an unversioned file, nil when the file name
	// holds no valid version (the candidate is then refused).
	Version *version.Version
	Path    string // where it was found; symlinks are not resolved
	Dir     string // the search directory it was found in
	// Refused says why the file must not run; empty when it may.
	Refused string
}

// Usable reports whether the candidate may be run.
func (c Candidate) Usable() bool { return c.Refused == "" }

// String names the candidate for messages: "docker 1.2.0 (/path)".
func (c Candidate) String() string {
	if c.Version == nil {
		return fmt.Sprintf("%s (%s)", c.Name, c.Path)
	}
	return fmt.Sprintf("%s %s (%s)", c.Name, c.Version, c.Path)
}

// Result is what a scan found.
type Result struct {
	// Dirs are the directories searched, in order, including those that
	// do not exist: error messages name them all.
	Dirs []string
	// Candidates are every plugin file found, usable or refused, ordered
	// by directory, then name, then version (newest first).
	Candidates []Candidate
}

// Scan lists the plugin files in dirs. A directory that does not exist
// (or is not a directory) is skipped. A file that must not run is listed
// with the reason in Refused; the first usable file for a given name and
// version wins, and later ones are refused as shadowed. A refused file
// shadows nothing. Scan fails only when an existing directory cannot be
// read.
//
// A plugin file, or a directory it is in or under, owned by anyone but
// the user running Scan or root is refused (see Pinned): use ScanPinned
// to let a lock file vouch for such a file.
func Scan(dirs []string) (*Result, error) { return ScanPinned(dirs, nil) }

// ScanPinned is Scan, except that a file refused only because it, or a
// directory above it, belongs to another user is usable when pinned says
// so. Every other check still applies.
func ScanPinned(dirs []string, pinned Pinned) (*Result, error) {
	r := &Result{Dirs: []string{}, Candidates: []Candidate{}}
	searched := map[string]bool{}
	winner := map[string]string{} // name and version -> path of the first usable file
	for _, dir := range dirs {
		dir = filepath.Clean(dir)
		if searched[dir] {
			continue
		}
		searched[dir] = true
		r.Dirs = append(r.Dirs, dir)
		found, err := scanDir(dir, pinned)
		if err != nil {
			return nil, err
		}
		for _, c := range found {
			if c.Usable() {
				key := c.Name + "\x00" + c.Version.String()
				if first, ok := winner[key]; ok {
					c.Refused = "shadowed by " + first
				} else {
					winner[key] = c.Path
				}
			}
			r.Candidates = append(r.Candidates, c)
		}
	}
	return r, nil
}

// scanDir returns the candidates in one directory, sorted by name, then
// version (newest first), then file name.
func scanDir(dir string, pinned Pinned) ([]Candidate, error) {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && !info.IsDir()) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan plugin directory: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scan plugin directory: %w", err)
	}
	dirRefused, dirForeign := checkDir(dir, info), false
	if dirRefused == "" {
		var fe *foreignError
		dirRefused, fe = checkAncestors(dir)
		dirForeign = fe != nil
	}
	var found []Candidate
	for _, e := range entries {
		name, v, err := ParseFileName(e.Name())
		if errors.Is(err, ErrNotPluginFile) {
			continue
		}
		c := Candidate{Name: name, Version: v, Path: filepath.Join(dir, e.Name()), Dir: dir}
		if err != nil {
			c.Refused = err.Error()
			found = append(found, c)
			continue
		}
		why, foreign := checkFile(c.Path)
		switch {
		case why == "":
			why, foreign = dirRefused, dirForeign
		case foreign && dirRefused != "" && !dirForeign:
			why, foreign = dirRefused, false // what a pin cannot waive first
		}
		c.Refused = why
		// Only a refusal for ownership alone may be waived, and only
		// once everything else about the file is right: the pin hashes
		// it, which must not be tried on a FIFO.
		if c.Refused != "" && foreign && pinned != nil && pinned(c) {
			c.Refused = ""
		}
		found = append(found, c)
	}
	sort.SliceStable(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if newer(a.Version, b.Version) || newer(b.Version, a.Version) {
			return newer(a.Version, b.Version)
		}
		return a.Path < b.Path
	})
	return found, nil
}

// unsafeBits are the permission bits that let someone other than the
// owner replace what runs.
const unsafeBits fs.FileMode = 0o022

// checkDir refuses a directory others may write to: they could swap a
// plugin between the scan and its launch. The sticky bit is deliberately
// not taken as mitigation; plugin directories have no reason to be shared.
func checkDir(dir string, info fs.FileInfo) string {
	if info.Mode().Perm()&unsafeBits != 0 {
		return fmt.Sprintf("directory %s is writable by group or others (mode %s)", dir, info.Mode())
	}
	return ""
}

// checkFile returns why the file at path must not run, or "", and whether
// that is only because another user owns it or a directory above it. A
// symlink is judged by its target: the target file and the directories
// the target is in and under.
func checkFile(path string) (string, bool) {
	info, err := os.Lstat(path)
	if err != nil {
		return fmt.Sprintf("cannot inspect: %v", err), false
	}
	what, owned := "file", "file "+path
	targetDir := ""
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return fmt.Sprintf("broken symlink: %v", err), false
		}
		if info, err = os.Stat(target); err != nil {
			return fmt.Sprintf("cannot inspect symlink target: %v", err), false
		}
		what = "symlink target " + target
		owned = what
		targetDir = filepath.Dir(target)
		if why := checkTargetDir(targetDir); why != "" {
			return why, false
		}
	}
	mode := info.Mode()
	switch {
	case !mode.IsRegular():
		return fmt.Sprintf("%s is not a regular file (mode %s)", what, mode), false
	case mode.Perm()&unsafeBits != 0:
		return fmt.Sprintf("%s is writable by group or others (mode %s)", what, mode), false
	case mode.Perm()&0o100 == 0:
		return fmt.Sprintf("%s is not executable by its owner (mode %s)", what, mode), false
	}
	var above string
	var aboveForeign *foreignError
	if targetDir != "" {
		if above, aboveForeign = checkAncestors(targetDir); above != "" {
			above = "symlink target: " + above
			if aboveForeign == nil {
				return above, false // what a pin cannot waive first
			}
		}
	}
	if fe := checkOwner(owned, info); fe != nil {
		return fe.Error(), true
	}
	return above, above != ""
}

// checkTargetDir applies checkDir to the directory a symlink points into.
func checkTargetDir(dir string) string {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Sprintf("cannot inspect symlink target directory: %v", err)
	}
	if why := checkDir(dir, info); why != "" {
		return "symlink target " + why
	}
	return ""
}
