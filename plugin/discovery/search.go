package discovery

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvPluginPath is the environment variable holding extra plugin
// directories, colon-separated, searched before the other defaults.
const EnvPluginPath = "PROMPTKIT_PLUGIN_PATH"

// Env holds the inputs of the default search path. It is a value so that
// tests, and embedders, need not touch the process environment.
type Env struct {
	PluginPath  string // $PROMPTKIT_PLUGIN_PATH
	XDGDataHome string // $XDG_DATA_HOME
	Home        string // the user's home directory
	WorkDir     string // the working directory; relative paths resolve against it
	ExeDir      string // the directory of the host executable
}

// EnvFromOS reads Env from the running process. A missing home directory
// is not an error (that default is then skipped); an unknown working
// directory or executable is, since the search path would silently lose
// entries.
func EnvFromOS() (Env, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Env{}, fmt.Errorf("working directory: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return Env{}, fmt.Errorf("host executable: %w", err)
	}
	home, _ := os.UserHomeDir()
	return Env{
		PluginPath:  os.Getenv(EnvPluginPath),
		XDGDataHome: os.Getenv("XDG_DATA_HOME"),
		Home:        home,
		WorkDir:     wd,
		ExeDir:      filepath.Dir(exe),
	}, nil
}

// SearchDirs returns the directories to scan, in order, each absolute
// (relative ones resolve against env.WorkDir), cleaned and listed once.
//
// Non-empty explicit dirs (the CLI's --plugin-dir, a config's
// spec.plugins.dirs) replace the defaults entirely, so a project can pin
// exactly where its plugins come from. The defaults are:
//
//  1. each entry of $PROMPTKIT_PLUGIN_PATH (empty entries skipped);
//  2. ./.promptkit/plugins;
//  3. $XDG_DATA_HOME/promptkit/plugins, or ~/.local/share/promptkit/plugins
//     when XDG_DATA_HOME is unset or relative (the XDG spec says to
//     ignore relative values);
//  4. the directory of the host executable;
//  5. its plugins subdirectory, where `make build` puts the plugins
//     (bin/plugins next to bin/promptkit-sandbox).
func SearchDirs(explicit []string, env Env) []string {
	var dirs []string
	if len(explicit) > 0 {
		dirs = explicit
	} else {
		dirs = append(dirs, strings.Split(env.PluginPath, ":")...)
		if env.WorkDir != "" {
			dirs = append(dirs, filepath.Join(env.WorkDir, ".promptkit", "plugins"))
		}
		switch {
		case filepath.IsAbs(env.XDGDataHome):
			dirs = append(dirs, filepath.Join(env.XDGDataHome, "promptkit", "plugins"))
		case env.Home != "":
			dirs = append(dirs, filepath.Join(env.Home, ".local", "share", "promptkit", "plugins"))
		}
		if env.ExeDir != "" {
			dirs = append(dirs, env.ExeDir, filepath.Join(env.ExeDir, "plugins"))
		}
	}
	out := []string{}
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if !filepath.IsAbs(d) && env.WorkDir != "" {
			d = filepath.Join(env.WorkDir, d)
		}
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
