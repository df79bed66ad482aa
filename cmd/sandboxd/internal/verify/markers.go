package verify

import (
	"path/filepath"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// firstMarker is the first of markers that is a file in dir, or "".
func firstMarker(ws *workspace.Workspace, dir string, markers []string) (string, error) {
	for _, m := range markers {
		ok, err := isFile(ws, filepath.Join(dir, m))
		if err != nil {
			return "", err
		}
		if ok {
			return m, nil
		}
	}
	return "", nil
}

// projectName is kind, and where it is when that is not the root.
func projectName(kind, dir string) string {
	if dir != "." {
		return kind + " in " + filepath.ToSlash(dir)
	}
	return kind
}

// testPaths are the patterns a test run was given, unless they are the
// Go-style default "./...", which for other projects means all tests.
func testPaths(opts TestOptions) []string {
	if len(opts.Packages) == 1 && opts.Packages[0] == "./..." {
		return nil
	}
	return opts.Packages
}
