package files

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// Write replaces the file at filePath with content, or creates it (mode
// 0644, with its missing parent directories). An existing file must have
// been read through l and be unchanged since; it keeps its mode. The
// write is atomic: a reader sees the old content or the new. The new
// content is recorded in l, so an Edit can follow without a Read.
func (f *Files) Write(l *Ledger, filePath, content string) (string, error) {
	out, err := f.write(l, filePath, content)
	if err != nil {
		return "", wrapWrite("write", filePath, err)
	}
	return out, nil
}

func (f *Files) write(l *Ledger, path, content string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.locate(path)
	if err != nil {
		return "", err
	}
	if t.info != nil {
		err := f.checkFresh(l, t, func() ([sha256.Size]byte, error) { return f.hashFile(path) })
		if err != nil {
			return "", err
		}
	}
	if strings.Contains(content, "[REDACTED:") {
		var before []byte
		if t.info != nil {
			if before, err = f.ws.ReadFile(path); err != nil {
				return "", err
			}
		}
		if err := checkMarkers(string(before), content); err != nil {
			return "", err
		}
	}
	data := []byte(content)
	if err := f.ws.WriteFile(path, data, 0o644); err != nil {
		return "", err
	}
	f.remember(l, path, t.rel, data)
	return fmt.Sprintf("Wrote %s (%s) to %s", plural(len(data), "byte"), plural(countLines(content), "line"), t.abs), nil
}

// wrapWrite puts verb and path before err, unless Workspace.WriteFile
// already did (it words its errors "write PATH: ..."): said twice, the
// path only adds noise.
func wrapWrite(verb, path string, err error) error {
	if verb == "write" && strings.HasPrefix(err.Error(), fmt.Sprintf("write %q: ", path)) {
		return err
	}
	return wrapPath(verb, path, err)
}

// wrapPath puts verb and path before err, but for a path over the
// workspace's limits, whose error quotes the start of it: the whole of
// a 100 KB path would only bury the reason.
func wrapPath(verb, path string, err error) error {
	var le *workspace.LimitError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", verb, err)
	}
	return fmt.Errorf("%s %q: %w", verb, path, err)
}
