package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadFullExample(t *testing.T) {
	path := filepath.Join("testdata", "runtime.yaml")
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, testOptions(t))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := &File{
		Path:       path,
		Dir:        dir,
		PluginDirs: []string{filepath.Join(dir, "plugins"), "/opt/promptkit/plugins"},
		Sandboxes: []Sandbox{
			{
				Name: "pii_runner", Mode: "docker_run", Version: "~> 1.0", Plugin: "docker", OpenTimeout: DefaultOpenTimeout,
				Config: map[string]any{
					"image":      "promptkit/pii-hook:1.2",
					"network":    "none",
					"mounts":     []any{filepath.Join(dir, "hooks") + ":/hooks:ro"},
					"extra_args": []any{"--cpus", 0.5, "--memory-swappiness", 0, "--init", true},
				},
				Line: 13, Column: 5,
			},
			{
				Name: "sidecar", Mode: "kubectl_exec", OpenTimeout: DefaultOpenTimeout,
				Config: map[string]any{
					"pod":       "hooks-0",
					"namespace": "ns-agents",
					"container": "hooks",
					"labels": map[string]any{
						"app":  "hook-${literal}",
						"tier": []any{"a", "agents", map[string]any{"deep": "hooks-0/$HOME"}},
					},
					"empty":     "",
					"unset_key": nil,
				},
				Line: 21, Column: 5,
			},
			{Name: "local", Mode: "direct", OpenTimeout: DefaultOpenTimeout, Config: map[string]any{}, Line: 31, Column: 5},
		},
		Hooks: []Hook{
			{
				Name: "pii_redactor", Command: "/hooks/pii.py",
				Env:  []string{"OPENAI_API_KEY", "LOG_LEVEL=info"},
				Type: "provider", Phases: []string{"before_call"}, Mode: ModeFilter,
				Timeout: 3 * time.Second, Sandbox: "pii_runner", Line: 34, Column: 5,
			},
			{
				Name: "tool_audit", Command: filepath.Join(dir, "hooks", "audit.sh"),
				Args: []string{"-n", "5"},
				Type: "tool", Phases: []string{"after_execution", "before_execution"}, Mode: ModeObserve,
				Timeout: DefaultTimeout, Line: 43, Column: 5,
			},
			{
				Name: "session_log", Command: "python3", Args: []string{"hooks/session.py"},
				Type: "session", Phases: []string{"session_start", "session_end"}, Mode: ModeFilter,
				Timeout: DefaultTimeout, Sandbox: "local", Line: 49, Column: 5,
			},
			{
				Name: "eval_sink", Command: filepath.Join(dir, "hooks", "eval.sh"),
				Type: "eval", Mode: ModeObserve, Timeout: DefaultEvalTimeout, Line: 55, Column: 5,
			},
			{
				Name: "in_pod", Command: "bin/check",
				Type: "provider", Phases: []string{"after_call"}, Mode: ModeFilter,
				Timeout: 250 * time.Millisecond, Sandbox: "sidecar", Line: 58, Column: 5,
			},
		},
	}
	assertFile(t, got, want)

	sb, ok := got.Sandbox("sidecar")
	if !ok || sb != &got.Sandboxes[1] {
		t.Errorf("Sandbox(sidecar) = %p, %v; want a pointer to Sandboxes[1]", sb, ok)
	}
	if _, ok := got.Sandbox(Direct); ok {
		t.Errorf("Sandbox(%q) found a declared sandbox; the built-in is never declared", Direct)
	}
}

// assertFile compares two Files piece by piece, so a failure says which
// sandbox or hook differs instead of dumping both Files whole.
func assertFile(t *testing.T, got, want *File) {
	t.Helper()
	if got == nil {
		t.Fatal("got a nil File")
	}
	if got.Path != want.Path || got.Dir != want.Dir {
		t.Errorf("Path, Dir = %q, %q; want %q, %q", got.Path, got.Dir, want.Path, want.Dir)
	}
	if !reflect.DeepEqual(got.PluginDirs, want.PluginDirs) {
		t.Errorf("PluginDirs:\ngot:  %#v\nwant: %#v", got.PluginDirs, want.PluginDirs)
	}
	compareList(t, "Sandboxes", got.Sandboxes, want.Sandboxes)
	compareList(t, "Hooks", got.Hooks, want.Hooks)
}

func compareList[T any](t *testing.T, what string, got, want []T) {
	t.Helper()
	for i := 0; i < max(len(got), len(want)); i++ {
		switch {
		case i >= len(got):
			t.Errorf("%s[%d]: missing, want %#v", what, i, want[i])
		case i >= len(want):
			t.Errorf("%s[%d]: unexpected %#v", what, i, got[i])
		case !reflect.DeepEqual(got[i], want[i]):
			t.Errorf("%s[%d]:\n%s", what, i, fieldDiff(reflect.ValueOf(got[i]), reflect.ValueOf(want[i])))
		}
	}
}

// fieldDiff lists the struct fields that differ.
func fieldDiff(got, want reflect.Value) string {
	var b strings.Builder
	for i := 0; i < got.NumField(); i++ {
		g, w := got.Field(i).Interface(), want.Field(i).Interface()
		if !reflect.DeepEqual(g, w) {
			fmt.Fprintf(&b, "  %s:\n    got:  %#v\n    want: %#v\n", got.Type().Field(i).Name, g, w)
		}
	}
	return b.String()
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of a missing file: %v, want fs.ErrNotExist", err)
	}
	var ce *Error
	if errors.As(err, &ce) {
		t.Errorf("a missing file is not a validation *Error")
	}
}

func TestManyProblemsReportedTogether(t *testing.T) {
	yaml := `spec:
  sandboxes:
    box:
      mode: dockr_run
      pod: ${NOPE}
    other: {}
  hooks:
    a:
      command: ./a
      hook: provider
      phases: [before_execution]
      timeout_ms: -1
    b:
      hook: eval
      mode: filter
      sandbox: missing
      phase: x
`
	_, err := Parse("runtime.yaml", []byte(yaml), testOptions(t))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("want *Error, got %v", err)
	}
	want := strings.Join([]string{
		`runtime.yaml:4:13: spec.sandboxes.box: unknown sandbox mode "dockr_run" (known modes: direct, docker_run, kubectl_exec)`,
		`runtime.yaml:5:12: spec.sandboxes.box: environment variable NOPE is not set (used in key "pod")`,
		`runtime.yaml:6:5: spec.sandboxes.other: missing required key "mode"`,
		`runtime.yaml:11:16: spec.hooks.a: phase "before_execution" is not a provider phase (valid: before_call, after_call)`,
		`runtime.yaml:12:19: spec.hooks.a: key "timeout_ms" must be a positive integer (milliseconds), got -1`,
		`runtime.yaml:13:5: spec.hooks.b: missing required key "command"`,
		`runtime.yaml:15:13: spec.hooks.b: eval hooks always run in observe mode; mode "filter" is not allowed`,
		`runtime.yaml:16:16: spec.hooks.b: sandbox "missing" is not declared in spec.sandboxes (declared: box, other)`,
		`runtime.yaml:17:7: spec.hooks.b: unknown key "phase" (did you mean "phases"?)`,
	}, "\n")
	if got := err.Error(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if len(ce.Problems) != 9 {
		t.Errorf("%d problems, want 9", len(ce.Problems))
	}
}

func TestProblemsSortedByPosition(t *testing.T) {
	// Hooks written before sandboxes are still reported in file order.
	yaml := "spec:\n  hooks:\n    h: {command: a, hook: nope}\n  sandboxes:\n    s: {mode: nope}\n"
	_, err := Parse("r.yaml", []byte(yaml), Options{})
	want := "r.yaml:3:27: spec.hooks.h: unknown hook type \"nope\" (valid: provider, tool, session, eval)\n" +
		"r.yaml:5:15: spec.sandboxes.s: unknown sandbox mode \"nope\" (known modes: direct)"
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

func TestOrderIsKept(t *testing.T) {
	names := []string{"zeta", "alpha", "mid", "beta", "omega", "a1", "b0"}
	var b strings.Builder
	b.WriteString("spec:\n  sandboxes:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "    %s: {mode: docker_run}\n", n)
	}
	b.WriteString("  hooks:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "    %s: {command: x, hook: eval, sandbox: %s}\n", n, n)
	}
	f, err := Parse("r.yaml", []byte(b.String()), testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	var sbs, hooks []string
	for _, s := range f.Sandboxes {
		sbs = append(sbs, s.Name)
	}
	for _, h := range f.Hooks {
		hooks = append(hooks, h.Name)
	}
	if !reflect.DeepEqual(sbs, names) || !reflect.DeepEqual(hooks, names) {
		t.Errorf("order lost:\nsandboxes: %v\nhooks:     %v\nwant:      %v", sbs, hooks, names)
	}
}

func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf", "runtime.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := `spec:
  plugins:
    dirs: [plugins, ../shared/plugins, /abs/plugins/]
  sandboxes:
    box: {mode: docker_run}
    host: {mode: direct}
  hooks:
    dot_slash:   {command: ./hooks/a.py, hook: eval}
    nested:      {command: hooks/b.py, hook: eval}
    parent:      {command: ../bin/c, hook: eval}
    bare:        {command: python3, hook: eval}
    absolute:    {command: /usr/bin/d, hook: eval}
    direct:      {command: ./e, hook: eval, sandbox: direct}
    declared:    {command: ./f, hook: eval, sandbox: host}
    in_docker:   {command: ./g, hook: eval, sandbox: box}
    docker_bare: {command: hooks/h, hook: eval, sandbox: box}
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "conf")
	wantDirs := []string{filepath.Join(conf, "plugins"), filepath.Join(dir, "shared", "plugins"), "/abs/plugins"}
	if !reflect.DeepEqual(f.PluginDirs, wantDirs) {
		t.Errorf("PluginDirs = %q, want %q", f.PluginDirs, wantDirs)
	}
	want := map[string]string{
		"dot_slash":   filepath.Join(conf, "hooks", "a.py"),
		"nested":      filepath.Join(conf, "hooks", "b.py"),
		"parent":      filepath.Join(dir, "bin", "c"),
		"bare":        "python3",
		"absolute":    "/usr/bin/d",
		"direct":      filepath.Join(conf, "e"),
		"declared":    filepath.Join(conf, "f"),
		"in_docker":   "./g",
		"docker_bare": "hooks/h",
	}
	for _, h := range f.Hooks {
		if h.Command != want[h.Name] {
			t.Errorf("hook %s: Command = %q, want %q", h.Name, h.Command, want[h.Name])
		}
	}
}

func TestRelativePathsFromRelativeConfigPath(t *testing.T) {
	f, err := Parse("conf/runtime.yaml", []byte("spec:\n  hooks:\n    h: {command: ./x, hook: eval}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "conf"); f.Dir != want {
		t.Errorf("Dir = %q, want %q", f.Dir, want)
	}
	if want := filepath.Join(wd, "conf", "x"); f.Hooks[0].Command != want {
		t.Errorf("Command = %q, want %q", f.Hooks[0].Command, want)
	}
}

func TestDefaults(t *testing.T) {
	yaml := `spec:
  hooks:
    p: {command: x, hook: provider, phases: [after_call]}
    e: {command: x, hook: eval}
    n: {command: x, hook: tool, phases: [before_execution], mode: , timeout_ms: , sandbox: , args: , env: }
`
	f, err := Parse("r.yaml", []byte(yaml), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		mode    string
		timeout time.Duration
	}{{ModeFilter, DefaultTimeout}, {ModeObserve, DefaultEvalTimeout}, {ModeFilter, DefaultTimeout}} {
		h := f.Hooks[i]
		if h.Mode != want.mode || h.Timeout != want.timeout || h.Sandbox != "" || h.Args != nil || h.Env != nil {
			t.Errorf("hook %s: %+v; want mode %s, timeout %s, no sandbox, args or env", h.Name, h, want.mode, want.timeout)
		}
	}
	if f.Sandboxes != nil || f.PluginDirs != nil {
		t.Errorf("Sandboxes, PluginDirs = %v, %v; want nil", f.Sandboxes, f.PluginDirs)
	}
}

func TestOptionalSectionsMayBeEmpty(t *testing.T) {
	for _, yaml := range []string{
		"spec: {}\n",
		"spec:\n  sandboxes:\n  hooks:\n  plugins:\n",
		"spec:\n  sandboxes: {}\n  hooks: {}\n  plugins: {dirs: []}\n",
		"kind: RuntimeConfig\nspec:\n  providers: [x]\n  other: {a: 1}\n",
	} {
		f, err := Parse("r.yaml", []byte(yaml), Options{})
		if err != nil {
			t.Errorf("%q: %v", yaml, err)
			continue
		}
		if len(f.Sandboxes) != 0 || len(f.Hooks) != 0 || f.PluginDirs != nil {
			t.Errorf("%q: got %+v, want an empty File", yaml, f)
		}
	}
}

func TestBrokenSandboxCountsAsDeclared(t *testing.T) {
	yaml := "spec:\n  sandboxes:\n    box:\n  hooks:\n    h: {command: x, hook: eval, sandbox: box}\n"
	_, err := Parse("r.yaml", []byte(yaml), Options{})
	want := "r.yaml:3:5: spec.sandboxes.box: entry is empty"
	if err == nil || err.Error() != want {
		t.Errorf("got:  %v\nwant: %s", err, want)
	}
}

func TestRelativeMountsResolveAgainstConfigDir(t *testing.T) {
	src := "spec:\n  sandboxes:\n    box:\n      mode: direct\n      mounts: [./hooks:/hooks:ro, data/x:/x, cache:/cache, /abs:/abs, 3]\n"
	f, err := Parse("/etc/pk/runtime.yaml", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := f.Sandboxes[0].Config["mounts"]
	want := []any{"/etc/pk/hooks:/hooks:ro", "/etc/pk/data/x:/x", "cache:/cache", "/abs:/abs", 3}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mounts = %#v, want %#v", got, want)
	}
}

func TestRelativePathKeysResolveAgainstConfigDir(t *testing.T) {
	src := "spec:\n  sandboxes:\n    k:\n      mode: direct\n      kubeconfig: ./kube/config\n      kubectl_path: kubectl\n" +
		"    d:\n      mode: direct\n      docker_path: bin/docker\n    a:\n      mode: direct\n      kubeconfig: /abs/config\n      kubectl_path: ~/bin/kubectl\n"
	f, err := Parse("/etc/pk/runtime.yaml", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	for _, sb := range f.Sandboxes {
		got[sb.Name] = sb.Config
	}
	want := map[string]map[string]any{
		"k": {"kubeconfig": "/etc/pk/kube/config", "kubectl_path": "kubectl"},
		"d": {"docker_path": "/etc/pk/bin/docker"},
		"a": {"kubeconfig": "/abs/config", "kubectl_path": "~/bin/kubectl"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

// TestWorkspaceResolvesAgainstConfigDir: a provider's workspace is a
// directory, so any relative path in it, a bare name included, is the
// config's directory's.
func TestWorkspaceResolvesAgainstConfigDir(t *testing.T) {
	src := "spec:\n  sandboxes:\n    a: {mode: direct, workspace: ./repo}\n    b: {mode: direct, workspace: repo}\n" +
		"    c: {mode: direct, workspace: /abs/repo}\n    d: {mode: direct, workspace: ~/repo}\n"
	f, err := Parse("/etc/pk/runtime.yaml", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "/etc/pk/repo", "b": "/etc/pk/repo", "c": "/abs/repo", "d": "~/repo"}
	for _, sb := range f.Sandboxes {
		if got := sb.Config["workspace"]; got != want[sb.Name] {
			t.Errorf("%s: workspace %v, want %s", sb.Name, got, want[sb.Name])
		}
	}
}

func TestOpenTimeout(t *testing.T) {
	f, err := Parse("r.yaml", []byte("spec:\n  sandboxes:\n    a: {mode: direct, open_timeout: 45s}\n    b: {mode: direct}\n"), testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := f.Sandboxes[0].OpenTimeout, f.Sandboxes[1].OpenTimeout; a != 45*time.Second || b != DefaultOpenTimeout {
		t.Errorf("open timeouts %v and %v, want 45s and the default %v", a, b, DefaultOpenTimeout)
	}
	if _, ok := f.Sandboxes[0].Config["open_timeout"]; ok {
		t.Error("open_timeout reached the backend's config")
	}
}
