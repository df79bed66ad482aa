package search

import (
	"errors"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
)

type globHit struct {
	path string
	mod  int64 // UnixNano
}

// statter reads the mtimes of Glob's matches while rg is still listing.
// On a big tree the stat calls cost nearly half as much as rg's whole walk,
// so they run on their own goroutines, which also keeps rg's pipe drained;
// paths go over in batches to keep channel traffic low. A small result is
// stat'ed in place, after the listing.
type statter struct {
	search *Searcher
	cache  *mtimeCache // nil: stat everything, remember nothing
	known  []globHit   // hits whose mtime the cache had
	batch  []globHit
	in     chan []globHit
	wg     sync.WaitGroup
	mu     sync.Mutex
	done   [][]globHit
}

const statBatch = 64

func (s *statter) add(path string) {
	if s.cache != nil {
		if mod, ok := s.cache.get(path); ok {
			s.known = append(s.known, globHit{path: path, mod: mod})
			return
		}
	}
	if s.batch == nil {
		s.batch = make([]globHit, 0, statBatch)
	}
	s.batch = append(s.batch, globHit{path: path})
	if len(s.batch) < statBatch {
		return
	}
	if s.in == nil {
		s.in = make(chan []globHit, 4)
		workers := min(runtime.GOMAXPROCS(0), 4)
		s.wg.Add(workers)
		for range workers {
			go func() {
				defer s.wg.Done()
				for b := range s.in {
					s.stat(b)
				}
			}()
		}
	}
	s.in <- s.batch
	s.batch = nil
}

// stat fills in b's mtimes and keeps the files that still exist. The paths
// are rg's, listed while walking without following links, but a
// directory on the way may have been swapped for a symlink since, so
// they are stat'ed by a Stater, which follows none; a link's own mtime is
// read.
func (s *statter) stat(b []globHit) {
	kept := b[:0]
	st, err := s.search.NewStater()
	if err == nil {
		defer st.Close()
	}
	for _, h := range b {
		if err != nil {
			kept = append(kept, h) // no workspace to stat in: unsorted
			continue
		}
		remember := s.cache != nil && s.cache.watch(st, h.path)
		fi, serr := st.Lstat(h.path)
		if errors.Is(serr, fs.ErrNotExist) {
			continue // removed since rg listed it
		}
		h.mod = fi.Mtime
		if remember && serr == nil {
			s.cache.put(h.path, h.mod)
		}
		kept = append(kept, h)
	}
	s.mu.Lock()
	s.done = append(s.done, kept)
	s.mu.Unlock()
}

// wait returns every hit once all are stat'ed.
func (s *statter) wait() []globHit {
	if len(s.batch) > 0 {
		s.stat(s.batch)
	}
	if s.in != nil {
		close(s.in)
		s.wg.Wait()
	}
	if len(s.known) > 0 {
		s.done = append(s.done, s.known)
	}
	if len(s.done) == 1 {
		return s.done[0]
	}
	return slices.Concat(s.done...)
}

// newer orders hits newest first, then by path.
func newer(a, b globHit) int {
	switch {
	case a.mod > b.mod:
		return -1
	case a.mod < b.mod:
		return 1
	}
	return strings.Compare(a.path, b.path)
}

// newest returns the k newest hits in order. Only k are ever shown, and
// sorting thousands of paths (mostly tied on mtime in a fresh checkout)
// would cost more than the rest of the work after rg exits; a k-sized
// heap with the oldest kept hit on top does not.
func newest(hits []globHit, k int) []globHit {
	if len(hits) <= k {
		slices.SortFunc(hits, newer)
		return hits
	}
	heap := slices.Clone(hits[:k])
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(heap, i)
	}
	for _, h := range hits[k:] {
		if newer(h, heap[0]) < 0 {
			heap[0] = h
			siftDown(heap, 0)
		}
	}
	slices.SortFunc(heap, newer)
	return heap
}

// siftDown restores the heap property (oldest on top) below i.
func siftDown(h []globHit, i int) {
	for {
		old := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h) && newer(h[c], h[old]) > 0 {
				old = c
			}
		}
		if old == i {
			return
		}
		h[i], h[old] = h[old], h[i]
		i = old
	}
}
