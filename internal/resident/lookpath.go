package resident

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// defaultPath is searched when the call's environment has no PATH, as a
// POSIX shell would.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// lookPath finds command as a shell would with the call's PATH (not the
// resident's: the call may set its own), so the error for a missing
// command is the resident's to give, before anything starts.
func lookPath(command, path string) (string, error) {
	if command == "" {
		return "", fmt.Errorf("empty command")
	}
	if strings.Contains(command, "/") {
		if executable(command) {
			return command, nil
		}
		return "", fmt.Errorf("command %q: not found (or not executable)", command)
	}
	if path == "" {
		path = defaultPath
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, command)
		if executable(p) {
			if !filepath.IsAbs(p) && !strings.HasPrefix(p, ".") {
				p = "./" + p
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q: not found (or not executable)", command)
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && unix.Access(p, unix.X_OK) == nil
}
