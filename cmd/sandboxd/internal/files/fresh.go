package files

import (
	"crypto/sha256"
	"errors"
)

// ReadFresh returns the content of the file at filePath under the rule
// Write and Edit apply: the file exists, may be written (inside the
// workspace, not under .git), and l has read it and it is unchanged
// since. A tool that computes a file's new content itself (a structural
// edit) reads it here, then writes it with Apply, which refuses if the
// content changed in between.
func (f *Files) ReadFresh(l *Ledger, filePath string) ([]byte, error) {
	data, err := f.readFresh(l, filePath)
	if err != nil {
		return nil, wrapPath("edit", filePath, err)
	}
	return data, nil
}

func (f *Files) readFresh(l *Ledger, path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.locate(path)
	if err != nil {
		return nil, err
	}
	if t.info == nil {
		return nil, errors.New("file does not exist")
	}
	if _, ok := l.get(f.ws, t.rel); !ok {
		return nil, errNotRead
	}
	data, err := f.ws.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := f.checkFresh(l, t, func() ([sha256.Size]byte, error) { return sha256.Sum256(data), nil }); err != nil {
		return nil, err
	}
	return data, nil
}
