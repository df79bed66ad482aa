// Package lockfile pins the plugins a RuntimeConfig uses to the exact
// binaries that were vetted: `promptkit-sandbox plugins lock` records each
// selected plugin's name, version and SHA-256 in a file beside the config,
// and the host refuses, before running it, any plugin that does not match.
package lockfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/go-version"

	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
)

// FileName is the lock file's name in the config's directory.
const FileName = "promptkit-sandbox.lock"

// FormatVersion is the lock file format this package reads and writes.
const FormatVersion = 1

// Lock is the content of a lock file. The zero value is an empty lock.
type Lock struct {
	// Plugins are the locked plugin binaries, one per name and version,
	// sorted by name then version (Set and Write keep that order).
	Plugins []Entry
}

// Entry pins one plugin binary.
type Entry struct {
	Name    string `json:"name"`
	Version string `json:"version"` // canonical, as go-version prints it: "1.2.0", "0.0.0"
	SHA256  string `json:"sha256"`  // lowercase hex
}

// file is the on-disk shape: the format version comes first so that a
// reader can tell an unsupported format from a malformed one.
type file struct {
	Version int     `json:"version"`
	Plugins []Entry `json:"plugins"`
}

// Path returns where the lock file for a config in configDir lives.
func Path(configDir string) string { return filepath.Join(configDir, FileName) }

// Read loads the lock file at path. A missing file is not an error: it
// returns a nil *Lock, meaning no lock is enforced. A file that cannot be
// parsed, has an unknown format version or holds an invalid entry is an
// error naming the file, and so is anything there but a regular file (a
// FIFO is refused at once rather than waited on) or one larger than
// MaxSize.
func Read(path string) (*Lock, error) {
	data, err := readRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("lock file %s is not valid JSON: %w", path, err)
	}
	switch {
	case head.Version == nil:
		return nil, fmt.Errorf("lock file %s has no \"version\" field", path)
	case *head.Version != FormatVersion:
		return nil, fmt.Errorf("lock file %s has format version %d; this build reads version %d (upgrade promptkit-sandbox, or rerun promptkit-sandbox plugins lock)",
			path, *head.Version, FormatVersion)
	}
	// Unknown fields are refused: in a file that guards what may run, a
	// misspelt key must not be silently ignored.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	l := &Lock{Plugins: f.Plugins}
	if err := l.validate(); err != nil {
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	return l, nil
}

// MaxSize bounds a lock file: thousands of entries fit in it.
const MaxSize = 1 << 20

// readRegular reads the regular file at path, at most MaxSize bytes.
func readRegular(path string) ([]byte, error) {
	f, err := discovery.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxSize)
	}
	return data, nil
}

// Write stores l at path atomically: it writes a temporary file in the
// same directory and renames it over path, so a reader (or a crash) never
// sees half a lock file. The file gets mode 0644 and a stable,
// diff-friendly layout: entries sorted, two-space indent, final newline.
func Write(path string, l *Lock) error {
	if l == nil {
		return errors.New("write lock file: no lock given")
	}
	if err := l.validate(); err != nil {
		return fmt.Errorf("write lock file %s: %w", path, err)
	}
	f := file{Version: FormatVersion, Plugins: append([]Entry{}, l.Plugins...)}
	sortEntries(f.Plugins)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("write lock file %s: %w", path, err)
	}
	if err := writeAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	return nil
}

func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; the lock file is meant to be
	// committed and read by everyone who runs the config.
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Make the rename itself durable; failing to is not worth an error
	// once the new content is in place.
	if d, derr := os.Open(dir); derr == nil { // #nosec G304 -- the directory of the lock file just written, to sync it
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// Set records sum as the SHA-256 of plugin name at version v, replacing
// any entry for the same name and version.
func (l *Lock) Set(name string, v *version.Version, sum string) {
	e := Entry{Name: name, Version: versionString(v), SHA256: sum}
	for i := range l.Plugins {
		if l.Plugins[i].Name == e.Name && l.Plugins[i].Version == e.Version {
			l.Plugins[i] = e
			return
		}
	}
	l.Plugins = append(l.Plugins, e)
	sortEntries(l.Plugins)
}

// find returns the entry for name at version ver, if any.
func (l *Lock) find(name, ver string) (Entry, bool) {
	for _, e := range l.Plugins {
		if e.Name == name && e.Version == ver {
			return e, true
		}
	}
	return Entry{}, false
}

// validate checks what Read accepts and Write produces, so that a lock
// written by one build is read back by it unchanged.
func (l *Lock) validate() error {
	seen := map[[2]string]bool{}
	for i, e := range l.Plugins {
		if e.Name == "" {
			return fmt.Errorf("plugins[%d]: missing name", i)
		}
		v, err := version.NewVersion(e.Version)
		if err != nil {
			return fmt.Errorf("plugins[%d] (%s): invalid version %q", i, e.Name, e.Version)
		}
		if v.String() != e.Version {
			return fmt.Errorf("plugins[%d] (%s): version %q is not canonical (write %q)", i, e.Name, e.Version, v.String())
		}
		if !isSHA256(e.SHA256) {
			return fmt.Errorf("plugins[%d] (%s %s): sha256 %q is not 64 lowercase hex digits", i, e.Name, e.Version, e.SHA256)
		}
		key := [2]string{e.Name, e.Version}
		if seen[key] {
			return fmt.Errorf("plugins[%d]: %s %s is listed twice", i, e.Name, e.Version)
		}
		seen[key] = true
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// sortEntries orders by name, then by version as versions compare
// (1.10.0 after 1.9.0); an unparsable version sorts by its text.
func sortEntries(es []Entry) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		va, erra := version.NewVersion(a.Version)
		vb, errb := version.NewVersion(b.Version)
		if erra == nil && errb == nil && !va.Equal(vb) {
			return va.LessThan(vb)
		}
		return a.Version < b.Version
	})
}

func versionString(v *version.Version) string {
	if v == nil {
		return ""
	}
	return v.String()
}
