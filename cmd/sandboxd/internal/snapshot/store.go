package snapshot

import (
	"compress/zlib"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// DefaultMaxFileSize is the largest file a snapshot holds when Options
// does not say.
const DefaultMaxFileSize = 10 << 20

// DefaultMaxFiles is how many files a workspace may have for a snapshot.
const DefaultMaxFiles = 200_000

// Options tune a Store; the zero value is usable.
type Options struct {
	// MaxFileSize is the largest file, in bytes, a snapshot holds; larger
	// ones are skipped and reported. 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// MaxFiles refuses a snapshot of a workspace with more files. 0 means
	// DefaultMaxFiles.
	MaxFiles int
	// Owner, when set and the process is root, owns the files and
	// directories a restore creates (a file it replaces keeps its owner).
	Owner *Owner
	// GitPath is the git binary; default: git on PATH.
	GitPath string
}

// Owner is a user and group ID.
type Owner struct{ UID, GID int }

// Store is the snapshots of one workspace. Its methods are safe for
// concurrent use: each takes the store's lock, in this process and,
// through flock, against any other using the same directory.
type Store struct {
	workspace string
	dir       string
	opts      Options
	git       *git
	euid      int
	mu        sync.Mutex
	// cache is, by path, the blob of each file the last walk read, so an
	// unchanged file is not read again; held under mu.
	cache map[string]cached
	zw    *zlib.Writer // writeBlob's, held under mu
}

// Open opens (creating if need be) the store for the workspace directory
// ws under stateDir; each workspace gets a directory of its own, named for
// a hash of its path, mode 0700.
func Open(stateDir, ws string, opts Options) (*Store, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	if stateDir, err = filepath.Abs(stateDir); err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	gitPath := opts.GitPath
	if gitPath == "" {
		if gitPath, err = exec.LookPath("git"); err != nil {
			return nil, fmt.Errorf("snapshots need git: %w", err)
		}
	}
	sum := sha256.Sum256([]byte(ws))
	dir := filepath.Join(stateDir, hex.EncodeToString(sum[:12]))
	if Inside(ws, stateDir) {
		return nil, fmt.Errorf("snapshot store %s is inside the workspace %s, where the agent could change it; give a --snapshot-dir elsewhere", stateDir, ws)
	}
	// The state directory may be shared (a --snapshot-dir the user
	// picked); the workspace's own directory in it must be private.
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	s := &Store{workspace: ws, dir: dir, opts: opts, euid: os.Geteuid(), cache: map[string]cached{}, git: &git{
		path:     gitPath,
		gitDir:   filepath.Join(dir, "git"),
		index:    filepath.Join(dir, "index"),
		workTree: ws,
		home:     dir,
	}}
	if err := s.init(); err != nil {
		return nil, err
	}
	return s, nil
}

// Inside reports whether dir is the workspace ws or under it, symlinks
// resolved: no place for a store the agent must not change. A dir that
// does not exist yet is judged by its deepest existing ancestor, so a
// new directory through a symlink into the workspace is inside too.
func Inside(ws, dir string) bool {
	ws, dir = Resolve(ws), Resolve(dir)
	rel, err := filepath.Rel(ws, dir)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// Resolve is the absolute path with every symlink in it resolved; the
// part of it that does not exist yet is appended, unresolved, to what
// its deepest existing ancestor resolves to.
func Resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// privateDir makes dir, mode 0700, or checks an existing one is a
// directory of this user's that nobody else may enter.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("snapshot store: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("snapshot store %s: not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("snapshot store %s: mode %v lets others in; want 0700", dir, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*unix.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("snapshot store %s: owned by uid %d, not this user", dir, st.Uid)
	}
	return nil
}

// init makes the bare repository once (SHA-1: writeBlob names objects
// so) and gives it the attributes that
// outrank the workspace's.
func (s *Store) init() error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(s.git.gitDir, "HEAD")); errors.Is(err, os.ErrNotExist) {
		if _, err := s.git.run(context.Background(), nil, "init", "--quiet", "--bare", "--object-format=sha1"); err != nil {
			return fmt.Errorf("snapshot store: %w", err)
		}
	}
	info := filepath.Join(s.git.gitDir, "info")
	if err := os.MkdirAll(info, 0o700); err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	if err := os.WriteFile(filepath.Join(info, "attributes"), []byte(gitAttributes), 0o600); err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	// A bare repository has no hooks to run, but the samples init
	// copies in are not wanted either.
	_ = os.RemoveAll(filepath.Join(s.git.gitDir, "hooks"))
	return nil
}

// lock takes the store's lock, within this process and across processes.
func (s *Store) lock() (func(), error) {
	s.mu.Lock()
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("snapshot store: lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		s.mu.Unlock()
		return nil, fmt.Errorf("snapshot store: lock: %w", err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		_ = f.Close()
		s.mu.Unlock()
	}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func refName(name string) string { return "refs/snapshots/" + name }

// commitOf is the commit a snapshot names, or ErrNotFound.
func (s *Store) commitOf(ctx context.Context, name string) (string, error) {
	out, err := s.git.run(ctx, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", refName(name)+"^{commit}")
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && ctx.Err() == nil {
			return "", fmt.Errorf("snapshot %q: %w", name, ErrNotFound)
		}
		return "", fmt.Errorf("snapshot %q: %w", name, err)
	}
	return string(trimNL(out)), nil
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
