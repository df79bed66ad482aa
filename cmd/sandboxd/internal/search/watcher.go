package search

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// DirWatcher reports, with inotify, what changed in the directories it
// watches. Whoever remembers something about files watches their
// directories first, then reads the files, and calls Drain before
// trusting what it remembered: the kernel queues an event before the
// system call that caused it returns, so a change made before Drain is
// reported by it.
//
// What inotify does not report is not seen: a file written through a hard
// link in a directory that is not watched, through a shared mapping, or
// by another machine on a network file system.
//
// Methods may be called concurrently; Drain calls its function with the
// watcher's lock held, so the function must not call the watcher.
type DirWatcher struct {
	mu   sync.Mutex
	fd   int              // the inotify descriptor; notYet, or -1 when unavailable or closed
	wds  map[int32]string // watch → directory
	dirs map[string]int32 // directory → watch; -1: could not be watched
	max  int
	buf  []byte
}

// Change is one thing a DirWatcher saw.
type Change struct {
	// Path changed: a file or directory in a watched directory was
	// written, touched, made, removed or renamed; or, with Gone, the
	// watched directory itself was removed or moved away.
	Path string
	Dir  bool // Path is a directory
	Gone bool // Path is a watched directory that left its place
	// Overflow: events were lost, so anything may have changed.
	Overflow bool
}

const watchMask = unix.IN_ATTRIB | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// notYet is the descriptor before first use: a watcher never used holds
// no inotify instance (there are 128 per user by default).
const notYet = -2

// NewDirWatcher returns a watcher that watches at most maxDirs
// directories, so a huge tree costs a bounded share of the machine's
// inotify watches.
func NewDirWatcher(maxDirs int) *DirWatcher {
	return &DirWatcher{
		fd:   notYet,
		wds:  map[int32]string{},
		dirs: map[string]int32{},
		max:  maxDirs,
		buf:  make([]byte, 64<<10),
	}
}

// Available starts inotify if it has not been started and reports
// whether it works (not after Close, nor without instances to spare).
func (w *DirWatcher) Available() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.startLocked()
}

func (w *DirWatcher) startLocked() bool {
	if w.fd == notYet {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			fd = -1
		}
		w.fd = fd
	}
	return w.fd >= 0
}

// known reports whether dir has been watched, or tried and failed, and
// whether it is watched.
func (w *DirWatcher) known(dir string) (known, watched bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wd, ok := w.dirs[dir]
	return ok, ok && wd >= 0
}

// watch makes sure dir is watched and reports whether it is: what is in
// dir may be remembered only then. The watch is put on target, which
// leads to dir: a caller that opened dir without following links passes
// its /proc/self/fd path (see Stater.WatchDir), so a symlink swapped in
// for dir since is not watched in its place.
func (w *DirWatcher) watch(dir, target string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wd, ok := w.dirs[dir]; ok {
		return wd >= 0
	}
	if !w.startLocked() || len(w.dirs) >= w.max {
		return false
	}
	wd, err := unix.InotifyAddWatch(w.fd, target, watchMask)
	if err != nil {
		w.dirs[dir] = -1 // gone, not a directory, or no watches left
		return false
	}
	if old, ok := w.wds[int32(wd)]; ok && old != dir { // #nosec G115 -- wd is the kernel's watch descriptor, a C int returned as a Go int
		// The same directory under another path (a path through a
		// symlink): one watch, so trust it under neither.
		w.dirs[dir] = -1
		return false
	}
	w.wds[int32(wd)] = dir  // #nosec G115 -- wd is the kernel's watch descriptor, a C int
	w.dirs[dir] = int32(wd) // #nosec G115 -- wd is the kernel's watch descriptor, a C int
	return true
}

// Drain hands every pending change to fn.
func (w *DirWatcher) Drain(fn func(Change)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return
	}
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return // EAGAIN: nothing more is pending
		}
		w.apply(w.buf[:n], fn)
	}
}

// apply decodes the events in b for fn, forgetting watches whose
// directory left its place.
func (w *DirWatcher) apply(b []byte, fn func(Change)) {
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:4])) // #nosec G115 -- the event's wd field is a C int: its four bytes read back as one
		mask := binary.NativeEndian.Uint32(b[4:8])
		n := int(binary.NativeEndian.Uint32(b[12:16]))
		if unix.SizeofInotifyEvent+n > len(b) {
			return
		}
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+n], "\x00"))
		b = b[unix.SizeofInotifyEvent+n:]
		if mask&unix.IN_Q_OVERFLOW != 0 {
			fn(Change{Overflow: true})
			continue
		}
		dir, ok := w.wds[wd]
		if !ok {
			continue
		}
		switch {
		case mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
			// A watch follows the inode, so after a move it would report
			// under the old path: drop it.
			if mask&unix.IN_IGNORED == 0 {
				_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) // #nosec G115 -- the same descriptor, as x/sys/unix's signature takes it
			}
			delete(w.wds, wd)
			delete(w.dirs, dir)
			fn(Change{Path: dir, Dir: true, Gone: true})
		case name != "":
			fn(Change{Path: dir + "/" + name, Dir: mask&unix.IN_ISDIR != 0})
		}
	}
}

// Close stops watching; Watch reports false after it.
func (w *DirWatcher) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		_ = unix.Close(w.fd)
	}
	w.fd = -1
	clear(w.wds)
	clear(w.dirs)
}
