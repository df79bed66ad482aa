package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// mtimeCache remembers the modification times Glob has read, so a Glob
// over a tree it has listed before stats only what changed: on a large
// tree the stat calls cost as much as rg's whole walk. Every directory
// holding a remembered file is watched with inotify, and an event on a
// file, or on a directory above it, forgets what was remembered below.
// Pending events are applied when a Glob starts, and the kernel queues an
// event before the system call that caused it returns, so a change made
// before a Glob starts is seen by it. A watch is added before the files
// under it are stat'ed, so no change falls between the two.
//
// One Glob at a time uses the cache (others stat everything): a Glob
// stores what it stat'ed only after the events queued meanwhile have had
// no chance to be applied, which is what keeps a stored time from
// outliving the event that made it stale.
//
// What inotify does not report is not seen: a file written through a hard
// link in a directory that is not watched, through a shared mapping, or
// by another machine on a network file system keeps its old time here
// until something else touches it. Only the order of Glob's results
// depends on it.
type mtimeCache struct {
	use sync.Mutex // held by the Glob using the cache

	mu     sync.Mutex
	fd     int              // the inotify descriptor; notYet, or -1 when unavailable or closed
	wds    map[int32]string // watch → directory
	dirs   map[string]int32 // directory → watch; -1: could not be watched
	mtimes map[string]int64 // file → mtime (UnixNano)
	buf    []byte
}

// Bounds on what the cache holds, so a huge tree costs a bounded share of
// the machine's inotify watches and of sandboxd's memory; past them files
// are stat'ed every time.
const (
	maxCachedFiles = 1 << 20
	maxWatchedDirs = 1 << 15
)

const watchMask = unix.IN_ATTRIB | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// notYet is the descriptor before the first Glob: a Searcher that never
// globs holds no inotify instance (there are 128 per user by default).
const notYet = -2

func newMtimeCache() *mtimeCache {
	return &mtimeCache{
		fd:     notYet,
		wds:    map[int32]string{},
		dirs:   map[string]int32{},
		mtimes: map[string]int64{},
		buf:    make([]byte, 64<<10),
	}
}

// acquire returns the cache, brought up to date, for one Glob; nil when
// another Glob holds it or it is unavailable. release gives it back.
func (c *mtimeCache) acquire() *mtimeCache {
	if c == nil || !c.use.TryLock() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd == notYet {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			fd = -1 // no inotify, or no instance left: Glob stats every time
		}
		c.fd = fd
	}
	if c.fd < 0 {
		c.use.Unlock()
		return nil
	}
	c.syncLocked()
	return c
}

func (c *mtimeCache) release() { c.use.Unlock() }

// syncLocked applies every pending event.
func (c *mtimeCache) syncLocked() {
	for {
		n, err := unix.Read(c.fd, c.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return // EAGAIN: nothing more is pending
		}
		c.apply(c.buf[:n])
	}
}

// apply forgets what the events in b make stale.
func (c *mtimeCache) apply(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:4]))
		mask := binary.NativeEndian.Uint32(b[4:8])
		n := int(binary.NativeEndian.Uint32(b[12:16]))
		if unix.SizeofInotifyEvent+n > len(b) {
			return
		}
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+n], "\x00"))
		b = b[unix.SizeofInotifyEvent+n:]
		if mask&unix.IN_Q_OVERFLOW != 0 {
			clear(c.mtimes) // events were lost: nothing remembered can be trusted
			continue
		}
		dir, ok := c.wds[wd]
		if !ok {
			continue
		}
		switch {
		case mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
			// The directory is gone from its path (a watch follows the
			// inode, so after a move it would report under the old one).
			c.forgetTree(dir)
			if mask&unix.IN_IGNORED == 0 {
				_, _ = unix.InotifyRmWatch(c.fd, uint32(wd))
			}
			delete(c.wds, wd)
			delete(c.dirs, dir)
		case name != "":
			p := dir + "/" + name
			delete(c.mtimes, p)
			if mask&unix.IN_ISDIR != 0 {
				c.forgetTree(p)
			}
		}
	}
}

// forgetTree forgets every file under dir.
func (c *mtimeCache) forgetTree(dir string) {
	prefix := dir + "/"
	for p := range c.mtimes {
		if strings.HasPrefix(p, prefix) {
			delete(c.mtimes, p)
		}
	}
}

// get returns the remembered mtime of path.
func (c *mtimeCache) get(path string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.mtimes[path]
	return m, ok
}

// watch makes sure the directory holding path is watched, and reports
// whether it is: a file may be remembered only then. It must be called
// before the file is stat'ed.
func (c *mtimeCache) watch(path string) bool {
	dir := filepath.Dir(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if wd, ok := c.dirs[dir]; ok {
		return wd >= 0
	}
	if c.fd < 0 || len(c.dirs) >= maxWatchedDirs {
		return false
	}
	wd, err := unix.InotifyAddWatch(c.fd, dir, watchMask)
	if err != nil {
		c.dirs[dir] = -1 // gone, not a directory, or no watches left
		return false
	}
	if old, ok := c.wds[int32(wd)]; ok && old != dir {
		// The same directory under another path (a path through a
		// symlink): one watch, so remember it under neither.
		c.dirs[dir] = -1
		return false
	}
	c.wds[int32(wd)] = dir
	c.dirs[dir] = int32(wd)
	return true
}

// put remembers path's mtime; its directory must be watched.
func (c *mtimeCache) put(path string, mtime int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mtimes) < maxCachedFiles {
		c.mtimes[path] = mtime
	}
}

// close stops watching and forgets everything.
func (c *mtimeCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
	}
	c.fd = -1
	clear(c.mtimes)
	clear(c.wds)
	clear(c.dirs)
}
