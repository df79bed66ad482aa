package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Query names a symbol by its name in a file, and optionally the
// one-based line it is on: never by column, which agents miscount.
type Query struct {
	File   string // absolute inside the workspace or relative to it
	Symbol string
	Line   int
}

// Ref is a place in a file: one-based line and column (in characters),
// and the line's text. Path is relative to the workspace, or absolute
// when Outside it (the standard library, a module cache): then Col
// counts the server's units and Text is empty, as sandboxd reads no
// file outside the workspace.
type Ref struct {
	Path      string
	Outside   bool
	Line, Col int
	Text      string
}

func (r Ref) String() string {
	if r.Text == "" {
		return fmt.Sprintf("%s:%d:%d", r.Path, r.Line, r.Col)
	}
	return fmt.Sprintf("%s:%d:%d: %s", r.Path, r.Line, r.Col, r.Text)
}

// Answer is where a symbol was found in the query's file, and the
// places the server gave for it, sorted, at most Options.MaxResults of
// Total.
type Answer struct {
	At    Ref
	Note  string // which occurrence was taken, when there was a choice
	Refs  []Ref
	Total int
}

// maxLineText bounds the text shown for a line.
const maxLineText = 200

// An empty answer from a server that just started, or that reports
// work under way (gopls loading packages), is asked again for a while:
// it may not have loaded what the answer needs yet. A non-empty answer
// never waits: gopls answers from what it has while it checks the rest.
const (
	youngServer = 30 * time.Second
	retryEmpty  = 10 * time.Second
)

// Definition is where the symbol is defined.
func (m *Manager) Definition(ctx context.Context, q Query) (Answer, error) {
	return onceMore(func() (Answer, error) {
		return m.locations(ctx, q, "textDocument/definition", nil)
	})
}

// References is everywhere the symbol is used, its declaration included.
func (m *Manager) References(ctx context.Context, q Query) (Answer, error) {
	return onceMore(func() (Answer, error) {
		return m.locations(ctx, q, "textDocument/references", map[string]any{"context": map[string]bool{"includeDeclaration": true}})
	})
}

// onceMore asks again, of a new server, when the server died during the
// question: one killed or crashed since the last question is only
// noticed when it is asked.
func onceMore[T any](ask func() (T, error)) (T, error) {
	v, err := ask()
	if errors.Is(err, errExited) {
		return ask()
	}
	return v, err
}

// session is one question in progress: the server, and the queried
// document as the server has it.
type session struct {
	m    *Manager
	c    *client
	rel  string
	pos  Position
	at   Ref
	note string
}

// begin starts a question: the server for q's file, synced with the
// disk, the file open in it, the symbol located. end must be called.
func (m *Manager) begin(ctx context.Context, q Query) (*session, func(), error) {
	rel, err := m.ws.Rel(q.File)
	if err != nil {
		return nil, nil, err
	}
	spec, err := m.spec(rel)
	if err != nil {
		return nil, nil, err
	}
	if _, err := m.ws.Stat(rel); err != nil {
		return nil, nil, err
	}
	c, release, err := m.acquire(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	c.qmu.Lock()
	end := func() { c.qmu.Unlock(); release() }
	fail := func(err error) (*session, func(), error) { end(); return nil, nil, err }
	unsettled := m.opts.Unsettled != nil && m.opts.Unsettled()
	if err := c.sync(ctx, unsettled); err != nil {
		return fail(c.explain(err))
	}
	text, err := c.open(rel)
	if err != nil {
		return fail(c.explain(err))
	}
	spot, note, err := Locate(text, spec.Language, q.Symbol, q.Line)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", rel, err))
	}
	line, _ := lineAt(text, spot.Line)
	s := &session{m: m, c: c, rel: rel, note: note,
		pos: Position{spot.Line, byteToUnits(line, spot.Byte, c.enc)},
		at:  Ref{Path: rel, Line: spot.Line + 1, Col: utf8.RuneCount(line[:spot.Byte]) + 1, Text: clip(line)},
	}
	return s, end, nil
}

func (s *session) params(extra map[string]any) map[string]any {
	p := map[string]any{"textDocument": textDocumentID{s.c.uri(s.rel)}, "position": s.pos}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func (m *Manager) locations(ctx context.Context, q Query, method string, extra map[string]any) (Answer, error) {
	s, end, err := m.begin(ctx, q)
	if err != nil {
		return Answer{}, err
	}
	defer end()
	var locs []Location
	for try := time.Now(); ; {
		var raw json.RawMessage
		if err := s.c.call(ctx, m.opts.Timeout, method, s.params(extra), &raw); err != nil {
			return Answer{}, err
		}
		if locs, err = decodeLocations(raw); err != nil {
			return Answer{}, fmt.Errorf("%s: %w", method, err)
		}
		settled := time.Since(s.c.started) > youngServer && !s.c.busy()
		if len(locs) > 0 || settled || time.Since(try) > retryEmpty {
			break
		}
		select {
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	refs := s.refs(locs)
	a := Answer{At: s.at, Note: s.note, Total: len(refs), Refs: refs}
	if len(refs) > m.opts.MaxResults {
		a.Refs = refs[:m.opts.MaxResults]
	}
	return a, nil
}

// decodeLocations reads the shapes a definition or references answer
// takes: null, a Location, Locations, or LocationLinks.
func decodeLocations(raw json.RawMessage) ([]Location, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '{' {
		raw = append(append(json.RawMessage{'['}, raw...), ']')
	}
	var items []struct {
		Location
		locationLink
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]Location, 0, len(items))
	for _, it := range items {
		if it.URI == "" && it.TargetURI != "" {
			out = append(out, Location{URI: it.TargetURI, Range: it.TargetSelectionRange})
			continue
		}
		out = append(out, it.Location)
	}
	return out, nil
}

// refs turns locations into sorted, distinct places with their text.
func (s *session) refs(locs []Location) []Ref {
	texts := map[string][]byte{}
	out := make([]Ref, 0, len(locs))
	for _, l := range locs {
		out = append(out, s.ref(l, texts))
	}
	slices.SortFunc(out, func(a, b Ref) int {
		return cmp.Or(cmp.Compare(boolInt(a.Outside), boolInt(b.Outside)), cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return slices.CompactFunc(out, func(a, b Ref) bool {
		return a.Path == b.Path && a.Line == b.Line && a.Col == b.Col
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ref is one location as a Ref; texts caches the files read.
func (s *session) ref(l Location, texts map[string][]byte) Ref {
	path, err := uriPath(l.URI)
	if err != nil {
		return Ref{Path: l.URI, Outside: true, Line: l.Range.Start.Line + 1, Col: l.Range.Start.Character + 1}
	}
	rel, err := s.m.ws.Rel(path)
	if err != nil {
		return Ref{Path: path, Outside: true, Line: l.Range.Start.Line + 1, Col: l.Range.Start.Character + 1}
	}
	text, ok := texts[rel]
	if !ok {
		if d, open := s.c.docs[rel]; open {
			text = d.text
		} else {
			text, _ = s.m.ws.ReadFile(rel)
		}
		texts[rel] = text
	}
	line, _ := lineAt(text, l.Range.Start.Line)
	b := unitsToByte(line, l.Range.Start.Character, s.c.enc)
	return Ref{Path: rel, Line: l.Range.Start.Line + 1, Col: utf8.RuneCount(line[:b]) + 1, Text: clip(line)}
}

// clip is a line's text for an answer: trimmed, and cut if long.
func clip(line []byte) string {
	t := strings.TrimSpace(string(line))
	if len(t) > maxLineText {
		cut := maxLineText
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		t = t[:cut] + "…"
	}
	return t
}
