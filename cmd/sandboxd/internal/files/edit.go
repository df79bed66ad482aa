package files

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
)

// Edit replaces oldString with newString in the file at filePath, which l
// must have read and which must be unchanged since. oldString must match
// the file byte for byte and, unless replaceAll, exactly once: an edit
// that could land in the wrong place is refused rather than guessed. The
// file is rewritten atomically and keeps its mode; the new content is
// recorded in l, so further edits need no Read.
func (f *Files) Edit(l *Ledger, filePath, oldString, newString string, replaceAll bool) (string, error) {
	out, err := f.edit(l, filePath, oldString, newString, replaceAll)
	if err != nil {
		return "", wrapWrite("edit", filePath, err)
	}
	return out, nil
}

func (f *Files) edit(l *Ledger, path, oldString, newString string, replaceAll bool) (string, error) {
	if oldString == "" {
		return "", errors.New("old_string is empty; to create a file or replace all of it, use Write")
	}
	if oldString == newString {
		return "", errors.New("old_string and new_string are the same; there is nothing to change")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.locate(path)
	if err != nil {
		return "", err
	}
	if t.info == nil {
		return "", errors.New("file does not exist; to create it, use Write")
	}
	if _, ok := l.get(f.ws, t.rel); !ok {
		return "", errNotRead
	}
	data, err := f.ws.ReadFile(path)
	if err != nil {
		return "", err
	}
	if err := f.checkFresh(l, t, func() ([sha256.Size]byte, error) { return sha256.Sum256(data), nil }); err != nil {
		return "", err
	}

	content := string(data)
	n := strings.Count(content, oldString)
	switch {
	case n == 0:
		msg := "old_string not found in " + t.abs
		// Tools and models write \n; a file with \r\n then never matches
		// a string of several lines, for a reason the agent cannot see.
		if strings.Contains(oldString, "\n") && !strings.Contains(oldString, "\r\n") && strings.Contains(content, "\r\n") {
			msg += " (the file has \\r\\n line endings; old_string must have them too)"
		}
		return "", errors.New(msg)
	case n > 1 && !replaceAll:
		return "", fmt.Errorf("old_string occurs %d times in %s; add surrounding lines to old_string to make it unique, or set replace_all to replace every occurrence", n, t.abs)
	}
	if !replaceAll {
		n = 1
	}
	updated := []byte(strings.Replace(content, oldString, newString, n))
	if err := checkMarkers(content, string(updated)); err != nil {
		return "", err
	}
	if err := f.ws.WriteFile(path, updated, 0o644); err != nil {
		return "", err
	}
	f.remember(l, path, t.rel, updated)
	return fmt.Sprintf("Replaced %s in %s", plural(n, "occurrence"), t.abs), nil
}
