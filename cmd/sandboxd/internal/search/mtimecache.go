package search

import (
	"strings"
	"sync"
)

// mtimeCache remembers the modification times Glob has read, so a Glob
// over a tree it has listed before stats only what changed: on a large
// tree the stat calls cost as much as rg's whole walk. Every directory
// holding a remembered file is watched (a DirWatcher), and an event on a
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

	mu      sync.Mutex
	watcher *DirWatcher
	mtimes  map[string]int64 // file → mtime (UnixNano)
}

// Bounds on what the cache holds, so a huge tree costs a bounded share of
// the machine's inotify watches and of sandboxd's memory; past them files
// are stat'ed every time.
const (
	maxCachedFiles = 1 << 20
	maxWatchedDirs = 1 << 15
)

func newMtimeCache() *mtimeCache {
	return &mtimeCache{watcher: NewDirWatcher(maxWatchedDirs), mtimes: map[string]int64{}}
}

// acquire returns the cache, brought up to date, for one Glob; nil when
// another Glob holds it or it is unavailable. release gives it back.
func (c *mtimeCache) acquire() *mtimeCache {
	if c == nil || !c.use.TryLock() {
		return nil
	}
	// No inotify, or no instance left: Glob stats every time.
	if !c.watcher.Available() {
		c.use.Unlock()
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watcher.Drain(c.apply)
	return c
}

func (c *mtimeCache) release() { c.use.Unlock() }

// apply forgets what a change makes stale; c.mu is held.
func (c *mtimeCache) apply(ch Change) {
	switch {
	case ch.Overflow:
		clear(c.mtimes) // events were lost: nothing remembered can be trusted
	case ch.Gone:
		c.forgetTree(ch.Path)
	default:
		delete(c.mtimes, ch.Path)
		if ch.Dir {
			c.forgetTree(ch.Path)
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
func (c *mtimeCache) watch(st *Stater, path string) bool {
	return st.WatchDir(c.watcher, path)
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
	c.watcher.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.mtimes)
}
