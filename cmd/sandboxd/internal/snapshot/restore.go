package snapshot

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Restored is what a restore did.
type Restored struct {
	// Before is the automatic snapshot of the workspace taken first.
	Before Snapshot
	// Changes are the paths changed, as the workspace saw them: Added
	// came back, Removed were deleted, Modified rewritten.
	Changes []Change
	// LeftAlone are paths the restore did not touch: skipped by the
	// automatic snapshot (over the cap, say).
	LeftAlone []Skipped
	// Failed are paths it could not restore, and why.
	Failed []Skipped
}

// AutoPrefix starts the name of the snapshot every restore takes first.
const AutoPrefix = "auto-before-restore-"

// Restore makes the workspace equal the snapshot name, after snapshotting
// it as it is (Restored.Before), so a restore can itself be undone.
func (s *Store) Restore(ctx context.Context, name string) (Restored, error) {
	if err := validName(name, maxStoredName); err != nil {
		return Restored{}, err
	}
	unlock, err := s.lock()
	if err != nil {
		return Restored{}, err
	}
	defer unlock()
	target, err := s.commitOf(ctx, name)
	if err != nil {
		return Restored{}, err
	}
	before, err := s.autoSnapshot(ctx, name)
	if err != nil {
		return Restored{}, err
	}
	out, err := s.git.run(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--abbrev=40", "--end-of-options", before.commit, target)
	if err != nil {
		return Restored{}, fmt.Errorf("restore %q: %w", name, err)
	}
	changes, err := parseRaw(out)
	if err != nil {
		return Restored{}, fmt.Errorf("restore %q: %w", name, err)
	}
	dirsOut, err := s.git.run(ctx, nil, "ls-tree", "-r", "-d", "-z", "--name-only", "--end-of-options", target)
	if err != nil {
		return Restored{}, fmt.Errorf("restore %q: %w", name, err)
	}
	r := Restored{Before: before, LeftAlone: before.Skipped}
	err = s.apply(ctx, changes, nulSplit(dirsOut), &r)
	slices.SortFunc(r.Changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	if err != nil {
		return r, fmt.Errorf("restore %q: %w", name, err)
	}
	return r, nil
}

// autoSnapshot snapshots the workspace before a restore of name.
func (s *Store) autoSnapshot(ctx context.Context, name string) (Snapshot, error) {
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	// Restoring an automatic snapshot must not make a longer name each
	// time: the name is cut to an agent's longest.
	base := AutoPrefix + name[:min(len(name), MaxNameLen)] + "-" + stamp
	auto := base
	for i := 2; ; i++ {
		if _, err := s.commitOf(ctx, auto); err != nil {
			break
		}
		auto = base + "-" + strconv.Itoa(i)
	}
	before, err := s.create(ctx, auto, "automatic snapshot before restoring "+name)
	if err != nil {
		return Snapshot{}, fmt.Errorf("restore %q: snapshot the workspace first: %w", name, err)
	}
	return before, nil
}

// apply makes the changes in the workspace: removals first, deepest
// first, with the directories they empty that the snapshot has no use
// for; then the files the snapshot has, their contents read from git.
func (s *Store) apply(ctx context.Context, changes []Change, snapshotDirs []string, r *Restored) error {
	t, err := openTree(s.workspace, s.opts.Owner)
	if err != nil {
		return err
	}
	defer t.close()
	leftAlone := map[string]bool{}
	for _, sk := range r.LeftAlone {
		leftAlone[sk.Path] = true
	}
	keep := map[string]bool{}
	for _, d := range snapshotDirs {
		keep[d] = true
	}
	fail := func(p string, err error) { r.Failed = append(r.Failed, Skipped{p, err.Error()}) }
	var writes []Change
	emptied := map[string]bool{}
	for _, c := range slices.Backward(changes) {
		if leftAlone[c.Path] {
			continue
		}
		if c.Kind != Removed {
			writes = append(writes, c)
			continue
		}
		if err := t.remove(c.Path); err != nil {
			fail(c.Path, err)
			continue
		}
		r.Changes = append(r.Changes, c)
		for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
			emptied[d] = true
		}
	}
	dirs := make([]string, 0, len(emptied))
	for d := range emptied {
		if !keep[d] {
			dirs = append(dirs, d)
		}
	}
	// Deepest first, so a parent is tried once its children are gone.
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range dirs {
		t.removeEmptyDir(d)
	}
	if len(writes) == 0 {
		return nil
	}
	slices.Reverse(writes)
	return s.writeAll(ctx, t, writes, r)
}

// writeAll writes the changed files, reading their contents through one
// git cat-file.
func (s *Store) writeAll(ctx context.Context, t *tree, writes []Change, r *Restored) error {
	cmd := s.git.command(ctx, "cat-file", "--batch")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	// Requests go in from another goroutine, so neither side waits on a
	// full pipe.
	go func() {
		w := bufio.NewWriter(stdin)
		for _, c := range writes {
			fmt.Fprintf(w, "%s\n", c.NewBlob)
		}
		// A failed write shows below: cat-file answers fewer blobs.
		_ = w.Flush()
		_ = stdin.Close()
	}()
	br := bufio.NewReaderSize(stdout, 1<<16)
	var readErr error
	for _, c := range writes {
		content, err := readBlob(br, c.NewBlob)
		if err != nil {
			readErr = err
			break
		}
		if err := t.write(c.Path, c.NewMode, content); err != nil {
			r.Failed = append(r.Failed, Skipped{c.Path, err.Error()})
			continue
		}
		r.Changes = append(r.Changes, c)
	}
	_, _ = io.Copy(io.Discard, br)
	if err := cmd.Wait(); err != nil && readErr == nil {
		readErr = fmt.Errorf("git cat-file: %w", err)
	}
	return readErr
}

// readBlob reads one object cat-file --batch wrote: "<sha> blob <size>",
// the content, a newline.
func readBlob(br *bufio.Reader, want string) ([]byte, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != want || f[1] != "blob" {
		return nil, fmt.Errorf("git cat-file: unexpected %q for %s", quoteStart(strings.TrimSpace(line)), want)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("git cat-file: bad size in %q", line)
	}
	content := make([]byte, size+1)
	if _, err := io.ReadFull(br, content); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return content[:size], nil
}
