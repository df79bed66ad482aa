package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/hooks"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/plugin/host"
	"github.com/altairalabs/promptkit-sandbox/plugin/lockfile"
)

func (e *cliEnv) plugins(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "list":
			return e.pluginsList(args[1:])
		case "lock":
			return e.pluginsLock(args[1:])
		}
	}
	e.errorf("usage: promptkit-sandbox plugins list [--config FILE] [--json] | plugins lock --config FILE")
	return exitUsage
}

// pluginRow is one plugin file as `plugins list` reports it.
type pluginRow struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Path    string   `json:"path"`
	Modes   []string `json:"modes"`
	// Providers are the modes among Modes that are provider modes
	// (codegen sandboxes, handed out by codegen up).
	Providers []string `json:"providers,omitempty"`
	SHA256    string   `json:"sha256"`
	Refused   string   `json:"refused,omitempty"`
}

type pluginList struct {
	Dirs     []string    `json:"dirs"`
	LockFile string      `json:"lock_file,omitempty"`
	Plugins  []pluginRow `json:"plugins"`
}

func (e *cliEnv) pluginsList(args []string) int {
	var common commonFlags
	fs := newFlagSet("plugins list", e.stderr, &common)
	cfgPath := fs.String("config", "", "RuntimeConfig whose spec.plugins.dirs and lock file apply")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	log, err := common.logger(e.stderr)
	if err != nil {
		e.errorf("%v", err)
		return exitUsage
	}
	var cfgDirs []string
	if *cfgPath != "" {
		f, err := config.Load(*cfgPath, config.Options{ModesFor: anyModes})
		if err != nil {
			e.errorf("%v", err)
			return exitUsage
		}
		cfgDirs = f.PluginDirs
	}
	h, err := host.New(hostOptions(&common, log, *cfgPath, cfgDirs))
	if err != nil {
		e.errorf("%v", err)
		return exitUsage
	}
	defer func() { _ = h.Close() }()

	list := pluginList{Dirs: h.Dirs(), Plugins: []pluginRow{}}
	if h.Locked() {
		list.LockFile = lockfile.Path(filepath.Dir(*cfgPath))
	}
	for _, c := range h.Candidates() {
		list.Plugins = append(list.Plugins, describeCandidate(h, c))
	}
	if *asJSON {
		out, _ := json.MarshalIndent(list, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "searched: %s\n", strings.Join(list.Dirs, ", "))
	if list.LockFile != "" {
		fmt.Fprintf(e.stdout, "lock file: %s\n", list.LockFile)
	}
	if len(list.Plugins) == 0 {
		fmt.Fprintln(e.stdout, "no plugins found")
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tMODES\tPATH\tSHA256\tSTATUS")
	for _, p := range list.Plugins {
		status := "ok"
		if p.Refused != "" {
			status = "refused: " + p.Refused
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Version, strings.Join(p.Modes, ","), p.Path, shortHash(p.SHA256), status)
	}
	_ = tw.Flush()
	return exitOK
}

// describeCandidate hashes a plugin file and, if it may run, starts it to
// ask which modes it serves.
func describeCandidate(h *host.Host, c discovery.Candidate) pluginRow {
	row := pluginRow{Name: c.Name, Path: c.Path, Refused: c.Refused, Modes: []string{}}
	if c.Version != nil {
		row.Version = c.Version.String()
	}
	if sum, err := discovery.SHA256(c.Path); err == nil {
		row.SHA256 = sum
	} else if row.Refused == "" {
		row.Refused = err.Error()
	}
	if row.Refused != "" {
		return row
	}
	d, err := h.Describe(context.Background(), c)
	if err != nil {
		row.Refused = err.Error()
		return row
	}
	for _, m := range d.Modes {
		row.Modes = append(row.Modes, m.Name)
		if m.Provider {
			row.Providers = append(row.Providers, m.Name)
		}
	}
	return row
}

func shortHash(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// pluginsLock selects the plugin of every plugin-backed sandbox in the
// config — with any existing lock ignored, so an upgrade can be locked —
// and records their hashes beside the config.
func (e *cliEnv) pluginsLock(args []string) int {
	var common commonFlags
	fs := newFlagSet("plugins lock", e.stderr, &common)
	cfgPath := fs.String("config", "", "RuntimeConfig to lock (required)")
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if *cfgPath == "" || fs.NArg() > 0 {
		e.errorf("usage: promptkit-sandbox plugins lock --config FILE")
		return exitUsage
	}
	log, err := common.logger(e.stderr)
	if err != nil {
		e.errorf("%v", err)
		return exitUsage
	}
	var h *host.Host
	opts := runtimeOptions(&common, log)
	opts.Plugins = func(configPath string, dirs []string) (hooks.Plugins, error) {
		o := hostOptions(&common, log, configPath, dirs)
		o.LockPath = ""
		var err error
		h, err = host.New(o)
		return h, err
	}
	rt, err := loadRuntimeWith(*cfgPath, opts)
	if err != nil {
		e.errorf("%v", err)
		return exitUsage
	}
	defer func() { _ = rt.Close(context.Background()) }()

	lock := &lockfile.Lock{}
	for _, c := range h.Selected() {
		sum, err := discovery.SHA256(c.Path)
		if err != nil {
			e.errorf("plugins lock: %v", err)
			return exitUsage
		}
		lock.Set(c.Name, c.Version, sum)
		fmt.Fprintf(e.stdout, "locked %s %s %s\n", c.Name, c.Version, sum)
	}
	path := lockfile.Path(filepath.Dir(*cfgPath))
	if err := lockfile.Write(path, lock); err != nil {
		e.errorf("plugins lock: %v", err)
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", path)
	return exitOK
}

// anyModes lets `plugins list` read a config's plugin dirs without
// resolving its sandboxes.
func anyModes([]string) (config.ModeSet, error) { return allModes{}, nil }

type allModes struct{}

func (allModes) Serves(string) bool { return true }
func (allModes) Modes() []string    { return nil }
