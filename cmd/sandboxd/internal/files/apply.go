package files

import (
	"bytes"
	"errors"
	"fmt"
)

// Change is new content for an existing file, computed from Old (a
// rename's edits): the file must still hold Old when it is written.
type Change struct {
	Path     string // as the workspace resolves it
	Old, New []byte
}

// Apply writes every change or none: each file is checked first (inside
// the workspace, not under .git, a regular file still holding Old), then
// written atomically; if a write fails, the files already written get
// their old content back. The session need not have read the files — the
// changes come from sandboxd, not the agent — and afterwards its ledger
// holds their new content, so the agent can Edit them without a Read.
func (f *Files) Apply(l *Ledger, changes []Change) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	targets := make([]target, len(changes))
	for i, c := range changes {
		t, err := f.locate(c.Path)
		if err != nil {
			return wrapPath("edit", c.Path, err)
		}
		if t.info == nil {
			return fmt.Errorf("edit %q: file does not exist", c.Path)
		}
		now, err := f.ws.ReadFile(c.Path)
		if err != nil {
			return wrapPath("edit", c.Path, err)
		}
		if !bytes.Equal(now, c.Old) {
			return fmt.Errorf("edit %q: %w", c.Path, errChangedMeanwhile)
		}
		if err := checkMarkers(string(c.Old), string(c.New)); err != nil {
			return wrapPath("edit", c.Path, err)
		}
		targets[i] = t
	}
	for i, c := range changes {
		if err := f.ws.WriteFile(c.Path, c.New, 0o644); err != nil {
			var undo []error
			for _, done := range changes[:i] {
				undo = append(undo, f.ws.WriteFile(done.Path, done.Old, 0o644))
			}
			if u := errors.Join(undo...); u != nil {
				return fmt.Errorf("%w; restoring the files already written failed too: %v", wrapWrite("write", c.Path, err), u)
			}
			return fmt.Errorf("%w; the files already written were restored", wrapWrite("write", c.Path, err))
		}
	}
	for i, c := range changes {
		f.remember(l, c.Path, targets[i].rel, c.New)
	}
	return nil
}

var errChangedMeanwhile = errors.New("file changed while the change was computed; nothing was written, try again")
