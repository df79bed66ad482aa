package testcover

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// Defaults for the zero Options fields.
const (
	DefaultParallel = 2
	DefaultMaxTests = 200
)

// Options configure how the tests run.
type Options struct {
	Env        []string            // the processes' whole environment (PATH finds go)
	Credential *syscall.Credential // the user they run as, when set
	Parallel   int                 // test runs at once: 2
	MaxTests   int                 // tests run per package, the first in -test.list order: 200
}

// Cover computes and caches per-test coverage for the packages of one
// workspace. Safe for concurrent use.
type Cover struct {
	ws   *workspace.Workspace
	opts Options

	mu   sync.Mutex
	pkgs map[string]*entry // by workspace-relative directory
}

// New returns the coverage of ws's packages, none computed yet.
func New(ws *workspace.Workspace, opts Options) *Cover {
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultParallel
	}
	if opts.MaxTests <= 0 {
		opts.MaxTests = DefaultMaxTests
	}
	return &Cover{ws: ws, opts: opts, pkgs: map[string]*entry{}}
}

// entry is one package's coverage; its mutex is held while it is
// computed, so concurrent asks for a package compute it once.
type entry struct {
	mu  sync.Mutex
	sum [sha256.Size]byte // of the package's .go files when computed
	pkg *Package
}

// Package is what the tests of one package ran.
type Package struct {
	Dir   string   // workspace-relative
	Tests []string // every test run, in -test.list order
	// Ran is, by test, the blocks it ran, by file base name.
	Ran map[string]map[string][]Block
	// Failed are the tests that failed or timed out; what they ran up
	// to then still counts.
	Failed []string
	// Skipped is how many tests were not run, over Options.MaxTests.
	Skipped int
	// Took is how long computing it took.
	Took time.Duration
}

// FileCoverage is a Package's coverage of one file.
type FileCoverage struct {
	*Package
	File   string // workspace-relative
	Cached bool   // served from the cache, not computed by this call
	// Incomplete is set when the time ran out before every test ran:
	// the tests that did not finish are missing, and nothing was cached.
	Incomplete bool
}

// Covering is the tests that ran line, in test order.
func (fc *FileCoverage) Covering(line int) []string {
	return fc.CoveringRange(line, line)
}

// CoveringRange is the tests that ran a block overlapping lines from
// through to.
func (fc *FileCoverage) CoveringRange(from, to int) []string {
	base := filepath.Base(fc.File)
	var out []string
	for _, t := range fc.Tests {
		if slices.ContainsFunc(fc.Ran[t][base], func(b Block) bool { return b.StartLine <= to && from <= b.EndLine }) {
			out = append(out, t)
		}
	}
	return out
}

// ErrTestFile is the error for a _test.go file: coverage counts only the
// package's own code.
var ErrTestFile = errors.New("it is a test file; coverage is of the package's non-test files")

// File is the per-test coverage of the Go file at path, from the cache
// when the package's .go files are as they were, else computed now
// within timeout (which bounds the build and every test run; a run cut
// short is reported, not cached).
func (c *Cover) File(ctx context.Context, path string, timeout time.Duration) (*FileCoverage, error) {
	real, err := c.ws.Resolve(path)
	if err != nil {
		return nil, err
	}
	switch fi, err := c.ws.Stat(path); {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, errors.New("it is not a regular file")
	case filepath.Ext(real) != ".go":
		return nil, errors.New("it is not a Go file (.go)")
	case strings.HasSuffix(real, "_test.go"):
		return nil, ErrTestFile
	}
	dir := filepath.Dir(real)
	sum, err := c.fingerprint(dir)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	e, ok := c.pkgs[dir]
	if !ok {
		e = &entry{}
		c.pkgs[dir] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pkg != nil && e.sum == sum {
		return &FileCoverage{Package: e.pkg, File: real, Cached: true}, nil
	}
	pkg, complete, err := c.compute(ctx, dir, timeout)
	if err != nil {
		return nil, err
	}
	if complete {
		e.pkg, e.sum = pkg, sum
	}
	return &FileCoverage{Package: pkg, File: real, Incomplete: !complete}, nil
}

// fingerprint hashes the names and contents of dir's .go files.
func (c *Cover) fingerprint(dir string) ([sha256.Size]byte, error) {
	var zero [sha256.Size]byte
	d, err := c.ws.Open(dir)
	if err != nil {
		return zero, err
	}
	entries, err := d.ReadDir(-1)
	_ = d.Close()
	if err != nil {
		return zero, fmt.Errorf("list %s: %w", dir, err)
	}
	h := sha256.New()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || e.Type()&fs.ModeType&^fs.ModeSymlink != 0 {
			continue
		}
		data, err := c.ws.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // unreadable or pointing out: go will say so
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(data))
		h.Write(data)
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
