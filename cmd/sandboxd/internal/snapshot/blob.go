package snapshot

import (
	"compress/zlib"
	"crypto/sha1" // #nosec G505 -- git names objects by SHA-1 (the store is --object-format=sha1); see writeBlob
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// writeBlob stores content as a git blob (a loose object, SHA-1, as the
// store's repository is made) and returns its name. sandboxd writes the
// object itself, from what it read through a checked descriptor, rather
// than let git read the workspace by path: git would follow a directory
// swapped for a symlink between its check and its open. Called under the
// store's lock.
func (s *Store) writeBlob(content []byte) (string, error) {
	header := "blob " + strconv.Itoa(len(content)) + "\x00"
	// #nosec G401 -- a git blob's name is its SHA-1 by format; it names the agent's own content, which the agent could write anyway, and vouches for nothing
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(content)
	name := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(s.git.gitDir, "objects", name[:2])
	file := filepath.Join(dir, name[2:])
	if _, err := os.Lstat(file); err == nil {
		return name, nil
	}
	// #nosec G301 -- git's own mode for object directories, inside the store's private (0700) directory
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("store a blob: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return "", fmt.Errorf("store a blob: %w", err)
	}
	defer os.Remove(tmp.Name())
	// Level 1, as core.looseCompression=1 has git do. One writer is
	// reused: each new one allocates the compressor's tables afresh.
	if s.zw == nil {
		s.zw, _ = zlib.NewWriterLevel(tmp, zlib.BestSpeed)
	} else {
		s.zw.Reset(tmp)
	}
	zw := s.zw
	_, err = zw.Write([]byte(header))
	if err == nil {
		_, err = zw.Write(content)
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = tmp.Chmod(0o444)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		return "", fmt.Errorf("store a blob: %w", err)
	}
	return name, nil
}
