package symbols

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/search"
)

// Options tunes an Index; zero values take the defaults.
type Options struct {
	CtagsPath   string        // default "ctags" looked up on PATH
	MaxFiles    int           // files indexed at most, default 50000
	MaxSymbols  int           // symbols held at most, default 1000000 (about 200 MiB)
	MaxFileSize int64         // bigger files are left out, default 1 MiB
	Timeout     time.Duration // per ctags run, default 2 minutes
	MaxOutput   int           // bytes read of one ctags run, default 64 MiB
	BatchSize   int           // files per ctags run, default 500
	// MaxWatchedDirs bounds the inotify watches the index holds, default
	// 32768. Past it, or when the system has no watches left, every
	// query lists the whole tree again (only changed files are re-read).
	MaxWatchedDirs int
	// Credential, when set, is the user ctags runs as: the agent's
	// (sandboxd --run-as), so that a directory the agent swaps for a
	// symlink between the listing and ctags' read leads ctags nowhere the
	// agent could not read itself. Nil runs ctags as sandboxd's user.
	Credential *syscall.Credential
	// Env, when set, is the environment ctags runs with (see
	// search.Options.Env); nil: sandboxd's own.
	Env []string
}

const (
	defaultMaxFiles    = 50000
	defaultMaxSymbols  = 1000000
	defaultMaxFileSize = 1 << 20
	defaultTimeout     = 2 * time.Minute
	defaultMaxOutput   = 64 << 20
	defaultBatchSize   = 500
	defaultMaxWatched  = 1 << 15
	// Past this many directories to list again, the whole tree is listed.
	maxRescans = 64
)

// sourceExts are the file name endings of the languages ctags reads for
// us (see ctagsArgs for the ones it is told about).
var sourceExts = []string{".go", ".py", ".rs", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"}

// ignoreFiles change what ripgrep lists below them.
var ignoreFiles = map[string]bool{".gitignore": true, ".ignore": true, ".rgignore": true}

// Index is the symbol index of one workspace. Queries may run
// concurrently; they take turns, and one whose context ends while it
// waits gives up. Close releases its watches.
type Index struct {
	dir   string // the workspace directory, as the Searcher prints it
	files *search.Searcher
	opts  Options

	turn     chan struct{} // holds a token while a query or Close runs; guards the rest
	ctags    string        // found on first use, so a missing ctags is retried
	watcher  *search.DirWatcher
	built    bool
	entries  map[string]*fileEntry // by absolute path
	retry    map[string]bool       // files whose ctags run failed
	capped   bool                  // MaxFiles was reached
	symCap   bool                  // MaxSymbols was reached
	blind    bool                  // some indexed directory is not watched
	nsyms    int                   // symbols held
	lastWarn string                // why some files are not indexed
}

type fileEntry struct {
	rel   string
	mtime int64
	size  int64
	syms  []Symbol
}

// New returns an index of the workspace at dir, whose files are listed by
// files. Nothing is read until the first Search.
func New(dir string, files *search.Searcher, opts Options) *Index {
	if opts.CtagsPath == "" {
		opts.CtagsPath = "ctags"
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = defaultMaxFiles
	}
	if opts.MaxSymbols <= 0 {
		opts.MaxSymbols = defaultMaxSymbols
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = defaultMaxFileSize
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = defaultMaxOutput
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize
	}
	if opts.MaxWatchedDirs <= 0 {
		opts.MaxWatchedDirs = defaultMaxWatched
	}
	return &Index{dir: filepath.Clean(dir), files: files, opts: opts, turn: make(chan struct{}, 1), watcher: search.NewDirWatcher(opts.MaxWatchedDirs), entries: map[string]*fileEntry{}, retry: map[string]bool{}}
}

// Close stops watching; a Search after it builds the index afresh each
// time.
func (x *Index) Close() error {
	x.turn <- struct{}{}
	defer func() { <-x.turn }()
	x.watcher.Close()
	x.built = false
	clear(x.entries)
	clear(x.retry)
	x.nsyms = 0
	return nil
}

// refresh builds the index, or brings it up to date with the changes
// reported since the last call. The caller has the turn.
func (x *Index) refresh(ctx context.Context) error {
	if x.ctags == "" {
		bin, err := exec.LookPath(x.opts.CtagsPath)
		if err != nil {
			return fmt.Errorf("ctags (%s) not found; install the Debian package universal-ctags: %w", x.opts.CtagsPath, err)
		}
		x.ctags = bin
	}
	if !x.built {
		// Listing the whole tree again costs ctags runs only for files
		// that are new or changed since whatever is still held.
		x.blind = false
		err := x.rescan(ctx, x.dir, true)
		// Without a watch on every directory, changes could be missed.
		x.built = err == nil && x.watcher.Available() && !x.blind
		return err
	}
	if err := x.update(ctx); err != nil {
		x.built = false // the changes drained are lost: list everything next time
		return err
	}
	return nil
}

// update applies the changes reported since the last query.
func (x *Index) update(ctx context.Context) error {
	defer func() {
		if x.blind {
			x.built = false // a directory made since could not be watched
		}
	}()
	deep, shallow, files := x.changes()
	if len(deep)+len(shallow) > maxRescans {
		deep, shallow = []string{x.dir}, nil
	}
	var stale []string
	for _, p := range files {
		if !under(p, deep) && !under(filepath.Dir(p), shallow) {
			stale = append(stale, p)
		}
	}
	for _, d := range deep {
		if err := x.rescan(ctx, d, true); err != nil {
			return err
		}
	}
	for _, d := range shallow {
		if !under(d, deep) {
			if err := x.rescan(ctx, d, false); err != nil {
				return err
			}
		}
	}
	// A file reported changed is read again whatever its time says:
	// two writes within one tick of the file system's clock can leave
	// the same size and time.
	st, err := x.files.NewStater()
	if err != nil {
		return err
	}
	defer st.Close()
	return x.index(ctx, x.check(st, stale, true))
}

// changes drains the watcher: directories to list again (deep: the whole
// tree below; shallow: the files directly in them) and indexed files to
// check. Failed files are checked again too.
func (x *Index) changes() (deep, shallow, files []string) {
	deepSet, shallowSet, fileSet := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for p := range x.retry {
		fileSet[p] = true
	}
	x.watcher.Drain(func(c search.Change) {
		switch {
		case c.Overflow:
			deepSet[x.dir] = true
		case c.Dir:
			deepSet[c.Path] = true // made, moved, removed or gone: list it again
		case ignoreFiles[filepath.Base(c.Path)]:
			deepSet[filepath.Dir(c.Path)] = true
		case x.entries[c.Path] != nil:
			fileSet[c.Path] = true
		case slices.Contains(sourceExts, filepath.Ext(c.Path)):
			shallowSet[filepath.Dir(c.Path)] = true // new: is it ignored?
		}
	})
	deep = topmost(deepSet)
	for d := range shallowSet {
		shallow = append(shallow, d)
	}
	for p := range fileSet {
		files = append(files, p)
	}
	return deep, shallow, files
}

// topmost keeps the directories no other one holds.
func topmost(set map[string]bool) []string {
	var out []string
	for d := range set {
		covered := false
		for c, parent := d, filepath.Dir(d); parent != c && !covered; c, parent = parent, filepath.Dir(parent) {
			covered = set[parent]
		}
		if !covered {
			out = append(out, d)
		}
	}
	return out
}

// under reports whether p is one of dirs or below one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// rescan lists dir again (its whole tree when deep), forgets what is no
// longer listed there and indexes what is new or changed.
func (x *Index) rescan(ctx context.Context, dir string, deep bool) error {
	listed := map[string]bool{}
	st, err := x.files.NewStater()
	if err != nil {
		return err
	}
	defer st.Close()
	if fi, err := st.Lstat(dir); err == nil && fi.Mode.IsDir() {
		depth := 1
		if deep {
			depth = 0
		}
		err := x.files.Files(ctx, search.FilesRequest{Dir: dir, MaxDepth: depth, Extensions: sourceExts}, func(p string) {
			listed[p] = true
		})
		if err != nil {
			return fmt.Errorf("listing %s: %w", x.rel(dir), err)
		}
	}
	for p := range x.entries {
		in := filepath.Dir(p) == dir || deep && strings.HasPrefix(p, dir+"/")
		if in && !listed[p] {
			x.drop(p)
		}
	}
	paths := make([]string, 0, len(listed))
	for p := range listed {
		paths = append(paths, p)
	}
	return x.index(ctx, x.check(st, paths, false))
}

// check stats files and returns those that need ctags: new, changed (or
// all, when force), or failed before. Each file's directory is watched
// before it is stat'ed, so a change after the stat is reported. st
// follows no symlink, so a directory swapped for one since it was listed
// is neither watched nor stat'ed through it.
func (x *Index) check(st *search.Stater, paths []string, force bool) []string {
	var todo []string
	for _, p := range paths {
		if !st.WatchDir(x.watcher, p) {
			x.blind = true
		}
		fi, err := st.Lstat(p)
		if err != nil || !fi.Mode.IsRegular() || fi.Size > x.opts.MaxFileSize {
			x.drop(p)
			continue
		}
		e := x.entries[p]
		if e != nil && !force && !x.retry[p] && e.mtime == fi.Mtime && e.size == fi.Size {
			continue
		}
		if e == nil {
			if len(x.entries) >= x.opts.MaxFiles {
				x.capped = true
				continue
			}
			e = &fileEntry{rel: x.rel(p)}
			x.entries[p] = e
		}
		e.mtime, e.size = fi.Mtime, fi.Size
		todo = append(todo, p)
	}
	return todo
}

// index runs ctags over paths in batches, a few at a time. A batch that
// fails leaves its files to be tried again at the next query.
func (x *Index) index(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	type result struct {
		batch []string
		syms  map[string][]Symbol
		err   error
	}
	var batches [][]string
	for len(paths) > 0 {
		n := min(len(paths), x.opts.BatchSize)
		batches = append(batches, paths[:n])
		paths = paths[n:]
	}
	results := make([]result, len(batches))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i, b := range batches {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rels := make([]string, len(b))
			for j, p := range b {
				rels[j] = x.rel(p)
			}
			syms, err := runCtags(ctx, ctagsRun{bin: x.ctags, dir: x.dir, cred: x.opts.Credential, env: x.opts.Env, timeout: x.opts.Timeout, maxOutput: x.opts.MaxOutput}, rels)
			results[i] = result{batch: b, syms: syms, err: err}
		})
	}
	wg.Wait()
	var errs []error
	for _, r := range results {
		for _, p := range r.batch {
			e := x.entries[p]
			if e == nil {
				continue
			}
			if r.err != nil {
				x.setSyms(e, nil)
				x.retry[p] = true
				continue
			}
			delete(x.retry, p)
			// Only the paths given are taken from ctags' output: a tag
			// naming any other file is left out.
			x.setSyms(e, r.syms[e.rel])
		}
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(errs) > 0 {
		x.lastWarn = errors.Join(errs...).Error()
	} else if len(x.retry) == 0 {
		x.lastWarn = ""
	}
	return nil
}

// setSyms replaces e's symbols, keeping the total under MaxSymbols.
func (x *Index) setSyms(e *fileEntry, syms []Symbol) {
	x.nsyms -= len(e.syms)
	if room := x.opts.MaxSymbols - x.nsyms; len(syms) > room {
		syms = syms[:max(room, 0)]
		x.symCap = true
	}
	e.syms = syms
	x.nsyms += len(syms)
}

// drop forgets a file.
func (x *Index) drop(p string) {
	if e := x.entries[p]; e != nil {
		x.nsyms -= len(e.syms)
	}
	delete(x.entries, p)
	delete(x.retry, p)
}

// rel is p relative to the workspace, '/'-separated.
func (x *Index) rel(p string) string {
	if r, ok := strings.CutPrefix(p, x.dir+"/"); ok {
		return r
	}
	return p
}
