package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Glob lists the files under path ("" is the workspace root) whose path
// relative to it matches pattern (doublestar: '**', braces, classes),
// newest first, as absolute paths. Files git would ignore are left out.
func (s *Searcher) Glob(ctx context.Context, pattern, path string) (string, error) {
	out, err := s.glob(ctx, pattern, path)
	if err != nil {
		return "", fmt.Errorf("glob: %w", err)
	}
	return out, nil
}

func (s *Searcher) glob(ctx context.Context, pattern, path string) (string, error) {
	t, err := s.resolve(path)
	if err != nil {
		return "", err
	}
	if !t.isDir {
		return "", fmt.Errorf("path %q is not a directory", path)
	}
	pattern, err = globPattern(pattern, t.abs)
	if err != nil {
		return "", err
	}

	args := append(slices.Clip(baseArgs), "--files", "--null")
	// Types are checked after the ignore rules, so narrowing the listing
	// to the pattern's file names is safe, and it spares reading and
	// matching every other path.
	match := func(rel string) bool { return doublestar.MatchUnvalidated(pattern, rel) }
	if seg, ok := lastSegment(pattern); ok {
		args = append(args, "--type-add="+typeName+":"+seg, "--type="+typeName)
		// The type is the same glob on file names, so for the common
		// patterns rg has already decided.
		switch pattern {
		case "**/" + seg:
			match = func(string) bool { return true }
		case seg:
			match = func(rel string) bool { return !strings.Contains(rel, "/") }
		}
	}
	args = append(args, "--", t.abs)
	run, err := s.start(ctx, args)
	if err != nil {
		return "", err
	}

	prefix := t.abs + "/"
	st := statter{search: s, cache: s.mtimes.acquire()}
	if st.cache != nil {
		defer st.cache.release()
	}
	var long []byte
	saw := false
	for {
		rec, cut, rerr := readRecord(run.out, 0, maxRecord, &long)
		saw = saw || len(rec) > 0
		// A cut path names no file; nothing could stat it whole anyway.
		if p := string(rec); !cut && len(p) > len(prefix) && p[:len(prefix)] == prefix && match(p[len(prefix):]) {
			st.add(p)
		}
		if rerr != nil {
			break
		}
	}
	hits := st.wait()
	warnings, err := run.wait(saw)
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		return "No files found", nil
	}

	shown := newest(hits, s.globLimit)
	var b strings.Builder
	for i, h := range shown {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(h.path)
	}
	if len(shown) < len(hits) {
		fmt.Fprintf(&b, "\n(showing %d of %d matches; narrow the pattern)", len(shown), len(hits))
	}
	if warnings != "" {
		fmt.Fprintf(&b, "\n(rg could not read everything: %s)", firstLine(warnings))
	}
	return b.String(), nil
}

// globPattern checks a Glob pattern and makes it relative to dir: a
// leading "./" and an absolute pattern under dir are taken as meant.
func globPattern(pattern, dir string) (string, error) {
	orig := pattern
	if pattern == "" {
		return "", errors.New("empty pattern")
	}
	if strings.HasPrefix(pattern, "/") {
		rest, ok := strings.CutPrefix(pattern, dir+"/")
		if !ok {
			return "", fmt.Errorf("pattern %q is absolute and not under the search directory %s; give it relative to that directory", pattern, dir)
		}
		pattern = rest
	}
	for strings.HasPrefix(pattern, "./") {
		pattern = strings.TrimLeft(pattern[2:], "/")
	}
	if pattern == "" || !doublestar.ValidatePattern(pattern) {
		return "", fmt.Errorf("invalid glob pattern %q", orig)
	}
	return pattern, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
