package snapshot

import (
	"context"
	"fmt"
	"strings"
)

// Change is one path that differs between two states of the workspace.
type Change struct {
	Kind ChangeKind
	Path string
	// OldMode, NewMode and NewBlob are git's: 100644, 100755 or 120000
	// (a symlink), and the object holding the new content.
	OldMode, NewMode string
	NewBlob          string
}

// ChangeKind is what happened to a path.
type ChangeKind byte

// The kinds of change, named from the later state's side.
const (
	Added    ChangeKind = 'A'
	Modified ChangeKind = 'M'
	Removed  ChangeKind = 'D'
)

func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Removed:
		return "removed"
	}
	return "modified"
}

// Diff is how the workspace differs from a snapshot.
type Diff struct {
	Changes []Change
	// Skipped are the workspace's paths no snapshot would hold (over the
	// cap, say): they are not compared.
	Skipped []Skipped
}

// Diff compares the workspace now with the snapshot name: Added are
// files there now and not in the snapshot, Removed the reverse, Modified
// those whose content, mode or type differ.
func (s *Store) Diff(ctx context.Context, name string) (Diff, error) {
	if err := validName(name, maxStoredName); err != nil {
		return Diff{}, err
	}
	unlock, err := s.lock()
	if err != nil {
		return Diff{}, err
	}
	defer unlock()
	commit, err := s.commitOf(ctx, name)
	if err != nil {
		return Diff{}, err
	}
	sc, err := s.stage(ctx)
	if err != nil {
		return Diff{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	out, err := s.git.run(ctx, nil, "diff-index", "--cached", "-r", "-z", "--no-renames", "--abbrev=40", "--end-of-options", commit)
	if err != nil {
		return Diff{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	changes, err := parseRaw(out)
	if err != nil {
		return Diff{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	return Diff{Changes: changes, Skipped: sc.skipped}, nil
}

// maxStoredName is the longest name a stored snapshot may have: an
// automatic one is longer than an agent's.
const maxStoredName = MaxNameLen + 64

// parseRaw reads git's -z raw diff: ":oldmode newmode oldsha newsha
// status" NUL path NUL, for each path.
func parseRaw(out []byte) ([]Change, error) {
	fields := nulSplit(out)
	var changes []Change
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) != 5 || meta[4] == "" {
			return nil, fmt.Errorf("unexpected git diff output %q", quoteStart(fields[i]))
		}
		c := Change{Path: fields[i+1], OldMode: meta[0], NewMode: meta[1], NewBlob: meta[3]}
		switch meta[4][0] {
		case 'A':
			c.Kind = Added
		case 'D':
			c.Kind = Removed
		case 'M', 'T':
			c.Kind = Modified
		default:
			return nil, fmt.Errorf("unexpected git diff status %q for %q", meta[4], c.Path)
		}
		changes = append(changes, c)
	}
	return changes, nil
}
