// Package cacheseed fills a Go build cache from a read-only one, made
// when the image was built (the standard library, compiled once), so that
// a fresh sandbox's first go test compiles the module alone.
//
// The seed is copied rather than pointed at: GOCACHE must be writable,
// and the go command trims entries by their modification time, which a
// copy makes now. Entries are only added, never replaced, so a cache kept
// across sandboxes (a volume) keeps what it holds and gains what a newer
// image brings; and outputs are copied before the entries that name
// them, so a go command running meanwhile finds either a whole entry or
// none.
package cacheseed

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Result says what Copy did.
type Result struct {
	Files   int   // files copied
	Bytes   int64 // their size
	Present int   // files the cache already had
}

// Copy adds every file of the cache at src that dst lacks.
func Copy(src, dst string) (Result, error) {
	var res Result
	// #nosec G301 -- the go command's own mode for its cache (umask applies): GOCACHE is the agent's, and sandboxd seeds it only as the agent's user
	if err := os.MkdirAll(dst, 0o777); err != nil {
		return res, fmt.Errorf("seed the Go build cache %s: %w", dst, err)
	}
	// Outputs first, then the action entries ("-a") that point at them.
	for _, entries := range []bool{false, true} {
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(src, path)
			if err != nil {
				return err
			}
			target := filepath.Join(dst, rel)
			switch {
			case d.IsDir():
				if rel != "." && !entries {
					// #nosec G301 -- the go command's own mode for cache directories (umask applies), in the agent's GOCACHE
					if err := os.Mkdir(target, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
						return err
					}
				}
				return nil
			case !d.Type().IsRegular(), d.Name() == "trim.txt":
				// trim.txt is when the cache was last trimmed: the
				// go command keeps its own for dst.
				return nil
			case strings.HasSuffix(d.Name(), "-a") != entries:
				return nil
			}
			n, err := copyNew(path, target)
			switch {
			case errors.Is(err, fs.ErrExist):
				res.Present++
				return nil
			case err != nil:
				return err
			}
			res.Files++
			res.Bytes += n
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("seed the Go build cache %s from %s: %w", dst, src, err)
		}
	}
	return res, nil
}

// copyNew copies src to a new file dst; fs.ErrExist if dst exists. The
// copy is made under a temporary name and linked into place whole (a
// link never replaces a file), so a go command running meanwhile never
// reads a file half-copied: the go command checks an output's size
// against its entry, but nothing checks an entry itself.
func copyNew(src, dst string) (int64, error) {
	if _, err := os.Lstat(dst); err == nil {
		return 0, fs.ErrExist
	}
	in, err := os.Open(src) // #nosec G304 -- a file of the seed cache the image names (SANDBOXD_GOCACHE_SEED), not the agent's input
	if err != nil {
		return 0, err
	}
	defer in.Close()
	tmp := fmt.Sprintf("%s.seed-%d", dst, os.Getpid())
	// #nosec G302 G304 -- the go command's own mode for cache files (umask applies); tmp is in the agent's GOCACHE, made O_EXCL|O_NOFOLLOW as the agent's user
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp)
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	if err := os.Link(tmp, dst); err != nil {
		return n, err // fs.ErrExist when the go command wrote it meanwhile
	}
	return n, nil
}
