package lsp

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// doc is a document open in the server, as last sent.
type doc struct {
	version int
	stamp   fileStamp
	text    []byte
}

// fileStamp tells a file's change cheaply.
type fileStamp struct {
	size  int64
	mtime time.Time
}

// maxScan bounds the files a scan for unseen changes looks at; a tree
// larger than this is not rescanned, only its open documents are.
const maxScan = 200_000

// scan stamps every file under the workspace that the server watches.
// Hidden directories, node_modules and Python's caches are skipped.
func scan(ws *workspace.Workspace, spec Spec) map[string]fileStamp {
	out := map[string]fileStamp{}
	root := ws.Dir()
	n := 0
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxScan {
			return filepath.SkipAll
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !spec.watches(name) {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			rel, _ := filepath.Rel(root, path)
			out[rel] = fileStamp{fi.Size(), fi.ModTime()}
		}
		return nil
	})
	return out
}

// changed records paths (relative to the workspace) sandboxd changed;
// none means anything may have changed.
func (c *client) changed(rels []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(rels) == 0 {
		c.rescan = true
	}
	for _, rel := range rels {
		if rel == "" {
			c.rescan = true
		} else if c.spec.watches(rel) {
			c.pending[rel] = true
		}
	}
}

// sync brings the server up to date with the disk before a question:
// the files sandboxd changed, every file when a shell may have changed
// some, and every open document, whose stamp is checked whatever else
// was reported. c.qmu must be held.
func (c *client) sync(ctx context.Context, unsettled bool) error {
	c.mu.Lock()
	pending, rescan := c.pending, c.rescan || unsettled
	c.pending, c.rescan = map[string]bool{}, false
	c.mu.Unlock()

	var events []fileEvent
	note := func(rel string, st fileStamp, ok bool) {
		old, had := c.files[rel]
		switch {
		case ok && !had:
			events = append(events, fileEvent{fileURI(filepath.Join(c.ws.Dir(), rel)), fileCreated})
			c.files[rel] = st
		case ok && old != st:
			events = append(events, fileEvent{fileURI(filepath.Join(c.ws.Dir(), rel)), fileChanged})
			c.files[rel] = st
		case !ok && had:
			events = append(events, fileEvent{fileURI(filepath.Join(c.ws.Dir(), rel)), fileDeleted})
			delete(c.files, rel)
		}
	}
	if rescan {
		now := scan(c.ws, c.spec)
		for rel, st := range now {
			note(rel, st, true)
		}
		for rel := range c.files {
			if _, ok := now[rel]; !ok {
				note(rel, fileStamp{}, false)
			}
		}
	}
	for rel := range pending {
		st, err := c.stamp(rel)
		note(rel, st, err == nil)
	}
	// Open documents are the server's truth for their files: an event
	// for one is not enough, its new text must be sent.
	for rel, d := range c.docs {
		if err := c.refresh(rel, d); err != nil {
			return err
		}
	}
	if len(events) == 0 {
		return ctx.Err()
	}
	return c.conn.notify("workspace/didChangeWatchedFiles", map[string]any{"changes": events})
}

func (c *client) stamp(rel string) (fileStamp, error) {
	fi, err := c.ws.Stat(rel)
	if err != nil {
		return fileStamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return fileStamp{}, fs.ErrInvalid
	}
	return fileStamp{fi.Size(), fi.ModTime()}, nil
}

// refresh sends an open document's new text if its file changed, and
// closes it if the file is gone.
func (c *client) refresh(rel string, d *doc) error {
	st, err := c.stamp(rel)
	if err != nil {
		delete(c.docs, rel)
		return c.conn.notify("textDocument/didClose", map[string]any{"textDocument": textDocumentID{c.uri(rel)}})
	}
	if st == d.stamp {
		return nil
	}
	text, err := c.ws.ReadFile(rel)
	if err != nil {
		return err
	}
	d.stamp = st
	if bytes.Equal(text, d.text) {
		return nil
	}
	d.version++
	d.text = text
	return c.conn.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": c.uri(rel), "version": d.version},
		"contentChanges": []map[string]string{{"text": string(text)}},
	})
}

// open makes sure the server has rel open, and returns its text as the
// server has it.
func (c *client) open(rel string) ([]byte, error) {
	if d, ok := c.docs[rel]; ok {
		return d.text, nil
	}
	st, err := c.stamp(rel)
	if err != nil {
		return nil, err
	}
	text, err := c.ws.ReadFile(rel)
	if err != nil {
		return nil, err
	}
	if len(text) > maxDocument {
		return nil, errors.New("the file is over 8 MiB, too large to send to a language server")
	}
	if len(c.docs) >= maxOpen {
		for other := range c.docs {
			delete(c.docs, other)
			if err := c.conn.notify("textDocument/didClose", map[string]any{"textDocument": textDocumentID{c.uri(other)}}); err != nil {
				return nil, err
			}
			break
		}
	}
	c.docs[rel] = &doc{version: 1, stamp: st, text: text}
	return text, c.conn.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": c.uri(rel), "languageId": c.spec.Language, "version": 1, "text": string(text),
	}})
}

// maxDocument bounds a document sent to the server, and maxOpen how
// many it holds open at once (a closed one is read from disk again).
const (
	maxDocument = 8 << 20
	maxOpen     = 64
)

func (c *client) uri(rel string) string { return fileURI(filepath.Join(c.ws.Dir(), rel)) }
