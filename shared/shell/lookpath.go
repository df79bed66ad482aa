package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LookPath finds name on the PATH in env, the one the command will see,
// not the host's own. Relative PATH entries are skipped: they would be
// relative to the host's directory, and could pick a program out of a
// workspace. A name with a slash is returned as it is.
func LookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path, _ := EnvValue(env, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		file := filepath.Join(dir, name)
		if fi, err := os.Stat(file); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return file, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH (%s)", name, path)
}
