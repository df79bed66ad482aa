package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
)

// describeCache remembers, across commands, what each plugin binary said
// it serves, and that one failed to start: a command then starts only the
// plugins that serve its modes, instead of every plugin on the path to
// ask. An entry holds for the file it was made from, the same path, size,
// modification time and SHA-256; the file is hashed again only when its
// inode or change time moved (neither can be set back by a user, so the
// content cannot have changed without one of them moving).
type describeCache struct {
	dir string // "" when off
}

// failureMemory is how long a failed start is remembered: long enough
// that a broken plugin beside a working one costs each command nothing,
// short enough that one that failed under load is tried again soon. A
// command whose mode no other plugin serves tries it again at once.
const failureMemory = 10 * time.Minute

// maxCacheEntry bounds what is read of an entry: it is a description,
// never large, and a file planted there must not cost memory.
const maxCacheEntry = 1 << 20

// cacheEntry is one file in the cache directory.
type cacheEntry struct {
	Path    string
	Size    int64
	ModTime int64 // ns
	Change  int64 // ctime, ns
	Dev     uint64
	Inode   uint64
	SHA256  string

	Description *plugin.Description `json:",omitempty"`
	Failure     string              `json:",omitempty"`
	FailedAt    time.Time           `json:",omitzero"`
}

// DefaultCacheDir is where a host keeps its cache unless told otherwise:
// promptkit-sandbox/plugins in the user cache directory ($XDG_CACHE_HOME,
// else ~/.cache). Empty when there is none.
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "promptkit-sandbox", "plugins")
}

// entryPath names the entry for a plugin path: one per path, so a new
// build replaces the old one's entry.
func (c describeCache) entryPath(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:16])+".json")
}

// load returns the entry for the plugin at path when it still describes
// the file there.
func (c describeCache) load(path string) (cacheEntry, bool) {
	e, ok := c.read(path)
	if !ok || (e.Description == nil && e.Failure == "") {
		return cacheEntry{}, false
	}
	now, err := statFile(path)
	if err != nil || now.Size != e.Size || now.ModTime != e.ModTime {
		return cacheEntry{}, false
	}
	if e.sameFile(now) {
		return e, true
	}
	sum, err := discovery.SHA256(path)
	if err != nil || sum != e.SHA256 {
		return cacheEntry{}, false
	}
	// The same content under a new inode or change time: the entry holds,
	// with the file's new identity, so the next load need not hash.
	now.SHA256, now.Description, now.Failure, now.FailedAt = sum, e.Description, e.Failure, e.FailedAt
	c.write(now)
	return e, true
}

// read returns the entry kept for path, as it is on disk.
func (c describeCache) read(path string) (cacheEntry, bool) {
	if c.dir == "" {
		return cacheEntry{}, false
	}
	f, err := os.Open(c.entryPath(path))
	if err != nil {
		return cacheEntry{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCacheEntry))
	if err != nil {
		return cacheEntry{}, false
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Path != path {
		return cacheEntry{}, false
	}
	return e, true
}

// sameFile reports whether e was made from the file now is: the same
// inode, size and modification and change times, which no content
// change leaves as they were.
func (e cacheEntry) sameFile(now cacheEntry) bool {
	return e.Size == now.Size && e.ModTime == now.ModTime && e.Change == now.Change && e.Dev == now.Dev && e.Inode == now.Inode
}

// storeDescription records what the plugin at path said it serves.
func (c describeCache) storeDescription(path string, d plugin.Description) {
	c.store(path, func(e *cacheEntry) { e.Description = &d })
}

// storeFailure records that the plugin at path failed to start.
func (c describeCache) storeFailure(path string, failure error) {
	c.store(path, func(e *cacheEntry) { e.Failure, e.FailedAt = failure.Error(), time.Now() })
}

func (c describeCache) store(path string, fill func(*cacheEntry)) {
	if c.dir == "" {
		return
	}
	e, err := statFile(path)
	if err != nil {
		return
	}
	// Hashing a plugin binary costs a cold start more than the rest of
	// it (about 13 ms for 23 MB): the entry already kept for this very
	// file has its hash, and when it says the same it needs no write.
	old, kept := c.read(path)
	if kept && old.sameFile(e) && old.SHA256 != "" {
		e.SHA256 = old.SHA256
	} else if e.SHA256, err = discovery.SHA256(path); err != nil {
		return
	}
	fill(&e)
	if kept && reflect.DeepEqual(old, e) {
		return
	}
	c.write(e)
}

// write replaces an entry atomically. The cache is an optimization: a
// directory that cannot be written only costs the next command a start.
func (c describeCache) write(e cacheEntry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(c.dir, ".entry-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), c.entryPath(e.Path)) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// statFile is the identity of the file at path (symlinks followed: the
// content is what runs).
func statFile(path string) (cacheEntry, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return cacheEntry{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return cacheEntry{}, fmt.Errorf("stat %s: no system data", path)
	}
	return cacheEntry{
		Path:    path,
		Size:    fi.Size(),
		ModTime: fi.ModTime().UnixNano(),
		Change:  st.Ctim.Nano(),
		Dev:     st.Dev,
		Inode:   st.Ino,
	}, nil
}
