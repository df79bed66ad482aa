package server

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/snapshot"
)

// Bounds on what the snapshot tools print, so a workspace with a great
// many changes cannot flood the agent's context.
const (
	maxSnapshotLines = 200
	maxSnapshotBytes = 32 << 10
)

// snapshotStores are the workspaces' snapshot stores, opened at first
// use: in Config.SnapshotDir, or in a private temporary directory made
// then and removed by Close.
type snapshotStores struct {
	mu     sync.Mutex
	dir    string
	tmp    string // the temporary directory this made, if it did
	opts   snapshot.Options
	stores map[string]*snapshot.Store
}

func newSnapshotStores(cfg Config) *snapshotStores {
	opts := snapshot.Options{MaxFileSize: cfg.SnapshotMaxFileSize}
	if c := cfg.RunAs; c != nil {
		opts.Owner = &snapshot.Owner{UID: int(c.Uid), GID: int(c.Gid)}
	}
	return &snapshotStores{dir: cfg.SnapshotDir, opts: opts, stores: map[string]*snapshot.Store{}}
}

// store is sp's snapshot store.
func (ss *snapshotStores) store(sp *space) (*snapshot.Store, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if st, ok := ss.stores[sp.name]; ok {
		return st, nil
	}
	if ss.dir == "" {
		tmp, err := os.MkdirTemp("", "sandboxd-snapshots-")
		if err != nil {
			return nil, fmt.Errorf("snapshot store: %w", err)
		}
		ss.dir, ss.tmp = tmp, tmp
	}
	st, err := snapshot.Open(ss.dir, sp.ws.Dir(), ss.opts)
	if err != nil {
		return nil, err
	}
	ss.stores[sp.name] = st
	return st, nil
}

// close removes the temporary store, if there is one: snapshots kept in
// a directory nobody named die with the server.
func (ss *snapshotStores) close() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.tmp == "" {
		return nil
	}
	return os.RemoveAll(ss.tmp)
}

// registerSnapshotTools adds snapshot_create, snapshot_list,
// snapshot_diff and snapshot_restore.
func (s *Server) registerSnapshotTools(m *mcpserver.MCPServer, ws []mcp.ToolOption) {
	with := func(opts ...mcp.ToolOption) []mcp.ToolOption {
		return append(slices.Clone(ws), opts...)
	}
	addTool(s, m, mcp.NewTool("snapshot_create", with(
		mcp.WithDescription(fmt.Sprintf("Save the workspace's files as a named snapshot you can later compare with (snapshot_diff) or return to (snapshot_restore). Kept outside the workspace, never in its .git; gitignored files are included, .git directories are not; files over %d bytes are skipped and listed.", s.snapshotMaxFileSize())),
		mcp.WithString("name", mcp.Required(), mcp.Description(fmt.Sprintf("The snapshot's name: 1 to %d letters, digits, '.', '_' or '-', starting with a letter or digit; it must be new", snapshot.MaxNameLen))),
		mcp.WithString("description", mcp.Description("What state the workspace is in, for snapshot_list")),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	)...), inSpace(s, s.snapshotCreate))
	addTool(s, m, mcp.NewTool("snapshot_list", with(
		mcp.WithDescription("List the workspace's snapshots, oldest first, with the time each was taken, its file count and its description."),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), inSpace(s, s.snapshotList))
	addTool(s, m, mcp.NewTool("snapshot_diff", with(
		mcp.WithDescription("Compare the workspace now with a snapshot: the files added since, modified (content, mode or type) and removed, one per line."),
		mcp.WithString("name", mcp.Required(), mcp.Description("The snapshot to compare with")),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), inSpace(s, s.snapshotDiff))
	addTool(s, m, mcp.NewTool("snapshot_restore", with(
		mcp.WithDescription("Make the workspace equal a snapshot: modified files are reverted, files added since are deleted, removed ones come back. The current state is snapshotted first (its name is in the result), so a restore can be undone. .git and files too large for snapshots are left alone; symlinks are restored as links, never followed."),
		mcp.WithString("name", mcp.Required(), mcp.Description("The snapshot to restore")),
		mcp.WithDestructiveHintAnnotation(true),
	)...), inSpace(s, s.snapshotRestore))
}

func (s *Server) snapshotMaxFileSize() int64 {
	if n := s.cfg.SnapshotMaxFileSize; n > 0 {
		return n
	}
	return snapshot.DefaultMaxFileSize
}

type snapshotCreateArgs struct {
	inWorkspace
	Name        string `json:"name" mcp:"required"`
	Description string `json:"description"`
}

func (s *Server) snapshotCreate(ctx context.Context, sp *space, a snapshotCreateArgs) (string, error) {
	st, err := s.snapshots.store(sp)
	if err != nil {
		return "", err
	}
	sn, err := st.Create(ctx, a.Name, a.Description)
	if err != nil {
		return "", err
	}
	var b limitedText
	b.line(fmt.Sprintf("Created snapshot %q: %d files.", sn.Name, sn.Files))
	writeSkipped(&b, sn.Skipped, "Skipped (not in the snapshot; a restore leaves them alone)")
	return b.String(), nil
}

// snapshot_list takes only the workspace.
func (s *Server) snapshotList(ctx context.Context, sp *space, _ inWorkspace) (string, error) {
	st, err := s.snapshots.store(sp)
	if err != nil {
		return "", err
	}
	list, err := st.List(ctx)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "No snapshots yet; take one with snapshot_create.", nil
	}
	var b limitedText
	b.line(fmt.Sprintf("%d snapshots, oldest first:", len(list)))
	for _, sn := range list {
		line := fmt.Sprintf("%s  %s  %d files", sn.Name, sn.Time.UTC().Format(time.RFC3339), sn.Files)
		if d := strings.TrimSpace(sn.Description); d != "" {
			line += "  " + strings.ReplaceAll(d, "\n", "\n    ")
		}
		if !b.line(line) {
			break
		}
	}
	return b.String(), nil
}

// snapshotArgs are the arguments of snapshot_diff and snapshot_restore.
type snapshotArgs struct {
	inWorkspace
	Name string `json:"name" mcp:"required"`
}

func (s *Server) snapshotDiff(ctx context.Context, sp *space, a snapshotArgs) (string, error) {
	name := a.Name
	st, err := s.snapshots.store(sp)
	if err != nil {
		return "", err
	}
	d, err := st.Diff(ctx, name)
	if err != nil {
		return "", err
	}
	var b limitedText
	if len(d.Changes) == 0 {
		b.line(fmt.Sprintf("The workspace matches snapshot %q.", name))
	} else {
		b.line(fmt.Sprintf("The workspace against snapshot %q: %s.", name, countKinds(d.Changes, "added", "modified", "removed")))
		writeChanges(&b, d.Changes, "added", "modified", "removed")
	}
	writeSkipped(&b, d.Skipped, "Not compared (no snapshot holds them)")
	return b.String(), nil
}

func (s *Server) snapshotRestore(ctx context.Context, sp *space, a snapshotArgs) (string, error) {
	name := a.Name
	st, err := s.snapshots.store(sp)
	if err != nil {
		return "", err
	}
	defer s.lspChanged(sp)
	r, err := st.Restore(ctx, name)
	var b limitedText
	if r.Before.Name != "" {
		b.line(fmt.Sprintf("Saved the workspace as it was in snapshot %q: restore that to undo.", r.Before.Name))
	}
	if err != nil {
		if b.Len() == 0 {
			return "", err
		}
		// The automatic snapshot is reported with the error.
		return "", fmt.Errorf("%w\n%s", err, strings.TrimSuffix(b.String(), "\n"))
	}
	b.line(fmt.Sprintf("Restored snapshot %q: %s.", name, countKinds(r.Changes, "restored", "reverted", "deleted")))
	writeChanges(&b, r.Changes, "restored", "reverted", "deleted")
	if len(r.Failed) > 0 {
		b.line(fmt.Sprintf("Could not restore %d paths:", len(r.Failed)))
		for _, f := range r.Failed {
			if !b.line("  " + f.Path + ": " + f.Reason) {
				break
			}
		}
	}
	writeSkipped(&b, r.LeftAlone, "Left alone (no snapshot holds them)")
	return b.String(), nil
}

// countKinds says how many changes are of each kind, named added,
// modified and removed in that order.
func countKinds(changes []snapshot.Change, added, modified, removed string) string {
	n := map[snapshot.ChangeKind]int{}
	for _, c := range changes {
		n[c.Kind]++
	}
	return fmt.Sprintf("%d %s, %d %s, %d %s", n[snapshot.Added], added, n[snapshot.Modified], modified, n[snapshot.Removed], removed)
}

// writeChanges lists changes a line each, the kind first.
func writeChanges(b *limitedText, changes []snapshot.Change, added, modified, removed string) {
	word := map[snapshot.ChangeKind]string{snapshot.Added: added, snapshot.Modified: modified, snapshot.Removed: removed}
	for i, c := range changes {
		if !b.line(word[c.Kind] + " " + c.Path) {
			b.truncated(len(changes) - i)
			return
		}
	}
}

func writeSkipped(b *limitedText, skipped []snapshot.Skipped, title string) {
	if len(skipped) == 0 {
		return
	}
	b.line(fmt.Sprintf("%s, %d:", title, len(skipped)))
	for i, sk := range skipped {
		if !b.line("  " + sk.Path + ": " + sk.Reason) {
			b.truncated(len(skipped) - i)
			return
		}
	}
}

// limitedText is a result of at most maxSnapshotLines lines and
// maxSnapshotBytes bytes; line refuses a line past either.
type limitedText struct {
	strings.Builder
	lines int
	full  bool
}

func (t *limitedText) line(s string) bool {
	if t.full || t.lines >= maxSnapshotLines || t.Len()+len(s)+1 > maxSnapshotBytes {
		t.full = true
		return false
	}
	t.lines++
	_, _ = t.WriteString(s)
	_ = t.WriteByte('\n')
	return true
}

// truncated ends a result line refused, saying how much was left out.
func (t *limitedText) truncated(more int) {
	fmt.Fprintf(&t.Builder, "... truncated: %d more not shown (at most %d lines or %d bytes)\n", more, maxSnapshotLines, maxSnapshotBytes)
}
