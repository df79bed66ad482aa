package snapshot

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// List is every snapshot, oldest first.
func (s *Store) List(ctx context.Context) ([]Snapshot, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Three NUL-ended fields a record; a message cannot hold a NUL.
	out, err := s.git.run(ctx, nil, "for-each-ref", "--format=%(refname:lstrip=2)%00%(committerdate:unix)%00%(contents)%00", "refs/snapshots/")
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	fields := strings.Split(string(out), "\x00")
	var list []Snapshot
	for i := 0; i+2 < len(fields); i += 3 {
		secs, _ := strconv.ParseInt(fields[i+1], 10, 64)
		sn := Snapshot{Name: strings.TrimLeft(fields[i], "\n"), Time: time.Unix(secs, 0)}
		parseMessage(fields[i+2], &sn)
		list = append(list, sn)
	}
	slices.SortStableFunc(list, func(a, b Snapshot) int { return a.Time.Compare(b.Time) })
	return list, nil
}
