package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// FileChange is a rename's new content for one file, and the content it
// was computed from: the file must still hold Old when it is written.
type FileChange struct {
	Path     string // relative to the workspace
	Old, New []byte
	Edits    int
}

// RenamePlan is what renaming a symbol would change; nothing is written
// until the caller applies it.
type RenamePlan struct {
	At    Ref
	Note  string
	Files []FileChange // sorted by path
	Edits int
}

// Rename asks the server how to rename the symbol to newName and
// computes the new contents. It refuses edits outside the workspace,
// and file creations, renames or deletions, in which case nothing is
// planned at all.
func (m *Manager) Rename(ctx context.Context, q Query, newName string) (RenamePlan, error) {
	if !isIdentifier(newName) {
		return RenamePlan{}, fmt.Errorf("new name %q is not an identifier", newName)
	}
	return onceMore(func() (RenamePlan, error) { return m.rename(ctx, q, newName) })
}

func (m *Manager) rename(ctx context.Context, q Query, newName string) (RenamePlan, error) {
	s, end, err := m.begin(ctx, q)
	if err != nil {
		return RenamePlan{}, err
	}
	defer end()
	var we *workspaceEdit
	params := s.params(map[string]any{"newName": newName})
	if err := s.c.call(ctx, m.opts.Timeout, "textDocument/rename", params, &we); err != nil {
		return RenamePlan{}, err
	}
	if we == nil {
		return RenamePlan{}, fmt.Errorf("the %s language server cannot rename %s at %s:%d", s.c.spec.Language, q.Symbol, s.at.Path, s.at.Line)
	}
	byURI, err := s.editsByURI(we)
	if err != nil {
		return RenamePlan{}, err
	}
	plan := RenamePlan{At: s.at, Note: s.note}
	for uri, edits := range byURI {
		fc, err := s.change(uri, edits)
		if err != nil {
			return RenamePlan{}, err
		}
		if fc.Edits > 0 {
			plan.Files = append(plan.Files, fc)
			plan.Edits += fc.Edits
		}
	}
	slices.SortFunc(plan.Files, func(a, b FileChange) int { return strings.Compare(a.Path, b.Path) })
	if len(plan.Files) == 0 {
		return RenamePlan{}, fmt.Errorf("the rename changes nothing: %s is already called %s", q.Symbol, newName)
	}
	return plan, nil
}

// editsByURI gathers a WorkspaceEdit's text edits by document, from
// either shape; an open document's version must be the one sent.
func (s *session) editsByURI(we *workspaceEdit) (map[string][]textEdit, error) {
	out := map[string][]textEdit{}
	for uri, edits := range we.Changes {
		out[uri] = append(out[uri], edits...)
	}
	for _, dc := range we.DocumentChanges {
		if dc.Kind != "" {
			return nil, fmt.Errorf("the rename would %s a file; sandboxd applies text edits only, so nothing was changed", dc.Kind)
		}
		uri := dc.TextDocument.URI
		if v := dc.TextDocument.Version; v != nil {
			if path, err := uriPath(uri); err == nil {
				if rel, err := s.m.ws.Rel(path); err == nil {
					if d, ok := s.c.docs[rel]; ok && d.version != *v {
						return nil, fmt.Errorf("the server answered for version %d of %s, not the current %d; try again", *v, rel, d.version)
					}
				}
			}
		}
		out[uri] = append(out[uri], dc.Edits...)
	}
	return out, nil
}

// change applies one document's edits to its text on disk.
func (s *session) change(uri string, edits []textEdit) (FileChange, error) {
	path, err := uriPath(uri)
	if err != nil {
		return FileChange{}, err
	}
	rel, err := s.m.ws.Rel(path)
	if err != nil {
		return FileChange{}, fmt.Errorf("the rename would edit %s, outside the workspace; nothing was changed", path)
	}
	old, err := s.m.ws.ReadFile(rel)
	if err != nil {
		return FileChange{}, fmt.Errorf("read %s to rename in it: %w", rel, err)
	}
	if d, ok := s.c.docs[rel]; ok && !bytes.Equal(d.text, old) {
		return FileChange{}, fmt.Errorf("%s changed while the rename was computed; try again", rel)
	}
	updated, err := applyEdits(old, edits, s.c.enc)
	if err != nil {
		return FileChange{}, fmt.Errorf("%s: %w", rel, err)
	}
	return FileChange{Path: rel, Old: old, New: updated, Edits: len(edits)}, nil
}

// applyEdits applies non-overlapping text edits to text.
func applyEdits(text []byte, edits []textEdit, enc Encoding) ([]byte, error) {
	type span struct {
		from, to int
		text     string
	}
	spans := make([]span, 0, len(edits))
	for _, e := range edits {
		from, to := offsetOf(text, e.Range.Start, enc), offsetOf(text, e.Range.End, enc)
		if to < from {
			return nil, errors.New("the server sent an edit that ends before it starts")
		}
		spans = append(spans, span{from, to, e.NewText})
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.from - b.from })
	var out bytes.Buffer
	last := 0
	for _, sp := range spans {
		if sp.from < last {
			return nil, errors.New("the server sent overlapping edits")
		}
		out.Write(text[last:sp.from])
		out.WriteString(sp.text)
		last = sp.to
	}
	out.Write(text[last:])
	return out.Bytes(), nil
}
