package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Snapshot describes one snapshot.
type Snapshot struct {
	Name        string
	Description string
	Time        time.Time
	Files       int
	// Skipped is what the snapshot left out (only on a fresh Create).
	Skipped []Skipped
	commit  string
}

// Create snapshots the workspace as name, with description.
func (s *Store) Create(ctx context.Context, name, description string) (Snapshot, error) {
	if err := validName(name, MaxNameLen); err != nil {
		return Snapshot{}, err
	}
	if err := validDescription(description); err != nil {
		return Snapshot{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	unlock, err := s.lock()
	if err != nil {
		return Snapshot{}, err
	}
	defer unlock()
	return s.create(ctx, name, description)
}

// create is Create under the lock.
func (s *Store) create(ctx context.Context, name, description string) (Snapshot, error) {
	if _, err := s.commitOf(ctx, name); err == nil {
		return Snapshot{}, fmt.Errorf("snapshot %q: %w; pick another name", name, ErrExists)
	}
	sc, err := s.stage(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	tree, err := s.git.run(ctx, nil, "write-tree")
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	files, now := sc.held, time.Now()
	msg := header(name, now, files, len(sc.skipped)) + description
	commit, err := s.git.run(ctx, strings.NewReader(msg), "commit-tree", string(trimNL(tree)))
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	// The all-zero old value makes the update fail if the name was taken
	// meanwhile.
	zero := strings.Repeat("0", len(trimNL(commit)))
	if _, err := s.git.run(ctx, nil, "update-ref", refName(name), string(trimNL(commit)), zero); err != nil {
		return Snapshot{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	return Snapshot{Name: name, Description: description, Time: now, Files: files, Skipped: sc.skipped, commit: string(trimNL(commit))}, nil
}

// stage makes the store's index the workspace as it is: entries for
// paths gone (or now skipped) are dropped, and every path found is set
// to the blob the walk stored for it. git never reads the workspace.
func (s *Store) stage(ctx context.Context) (scan, error) {
	sc, err := s.walk()
	if err != nil {
		return scan{}, err
	}
	out, err := s.git.run(ctx, nil, "ls-files", "-z", "--cached")
	if err != nil {
		return scan{}, err
	}
	found := make(map[string]bool, len(sc.entries))
	for _, e := range sc.entries {
		found[e.path] = true
	}
	var gone []string
	for _, p := range nulSplit(out) {
		if !found[p] {
			gone = append(gone, p)
		}
	}
	if len(gone) > 0 {
		if _, err := s.git.run(ctx, nulJoin(gone), "update-index", "-z", "--force-remove", "--stdin"); err != nil {
			return scan{}, err
		}
	}
	var info bytes.Buffer
	for _, e := range sc.entries {
		fmt.Fprintf(&info, "%s %s\t%s\x00", e.mode, e.blob, e.path)
	}
	if _, err := s.git.run(ctx, &info, "update-index", "-z", "--index-info"); err != nil {
		return scan{}, err
	}
	sc.held = len(sc.entries)
	return sc, nil
}

// header is the first lines of a snapshot's commit message, before its
// description: the description comes after a blank line, so it cannot
// forge them.
// The time is to the nanosecond, so List can order snapshots taken in
// the same second (git's dates are to the second).
func header(name string, at time.Time, files, skipped int) string {
	return fmt.Sprintf("%s\ntime %s\nfiles %d\nskipped %d\n\n", name, at.UTC().Format(time.RFC3339Nano), files, skipped)
}

// parseMessage reads a commit message header wrote into sn.
func parseMessage(msg string, sn *Snapshot) {
	head, description, _ := strings.Cut(msg, "\n\n")
	sn.Description = description
	for _, line := range strings.Split(head, "\n") {
		key, v, _ := strings.Cut(line, " ")
		switch key {
		case "files":
			sn.Files, _ = strconv.Atoi(v)
		case "time":
			if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
				sn.Time = at
			}
		}
	}
}
