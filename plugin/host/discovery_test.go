package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/plugin/lockfile"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func selected(t *testing.T, h *Host) []string {
	t.Helper()
	var out []string
	for _, c := range h.Selected() {
		out = append(out, c.Name+" "+c.Version.String()+" "+c.Path)
	}
	return out
}

func TestDiscoveryOrderFirstDirWins(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	want := install(t, testPlugin, first, "promptkit-sandbox-test_v1.0.0")
	install(t, testPlugin, second, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{first, second}})
	open(t, h, config.Sandbox{Mode: "test_direct"})
	if got := selected(t, h); len(got) != 1 || got[0] != "test 1.0.0 "+want {
		t.Fatalf("selected %v, want the copy in the first dir", got)
	}

	// The same through PROMPTKIT_PLUGIN_PATH, in its order.
	env := emptyEnv(t)
	env.PluginPath = second + ":" + first
	h = newHost(t, Options{Env: env})
	open(t, h, config.Sandbox{Mode: "test_direct"})
	if got := selected(t, h); len(got) != 1 || !strings.HasPrefix(got[0], "test 1.0.0 "+second) {
		t.Fatalf("selected %v, want the copy in %s", got, second)
	}
}

func TestExplicitDirsReplaceDefaults(t *testing.T) {
	def, explicit := t.TempDir(), t.TempDir()
	install(t, testPlugin, def, "promptkit-sandbox-test_v2.0.0")
	install(t, testPlugin, explicit, "promptkit-sandbox-test_v1.0.0")
	env := emptyEnv(t)
	env.PluginPath = def
	h := newHost(t, Options{Env: env, Dirs: []string{explicit}})
	open(t, h, config.Sandbox{Mode: "test_direct"})
	if got := selected(t, h); len(got) != 1 || !strings.HasPrefix(got[0], "test 1.0.0 ") {
		t.Fatalf("selected %v; --plugin-dir must replace the default path", got)
	}
	// Config dirs replace the defaults too, but --plugin-dir beats them.
	h = newHost(t, Options{Env: env, ConfigDirs: []string{explicit}})
	open(t, h, config.Sandbox{Mode: "test_direct"})
	if got := selected(t, h); !strings.HasPrefix(got[0], "test 1.0.0 ") {
		t.Fatalf("selected %v; spec.plugins.dirs must replace the default path", got)
	}
}

func TestVersionSelection(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"1.0.0", "1.2.0", "1.2.9", "1.3.0", "2.0.0"} {
		install(t, testPlugin, dir, "promptkit-sandbox-test_v"+v)
	}
	cases := []struct{ constraint, want string }{
		{"", "2.0.0"},
		{"~> 1.2.0", "1.2.9"},
		{"~> 1.2", "1.3.0"},
		{">= 1.0, < 1.3", "1.2.9"},
		{"= 1.0.0", "1.0.0"},
	}
	for _, tc := range cases {
		h := newHost(t, Options{Dirs: []string{dir}})
		sb := open(t, h, config.Sandbox{Mode: "test_direct", Version: tc.constraint})
		resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "true"})
		if err != nil {
			t.Fatalf("%q: spawn: %v (%s)", tc.constraint, err, resp.Stderr)
		}
		got := h.Selected()
		if len(got) != 1 || got[0].Version.String() != tc.want {
			t.Errorf("constraint %q selected %v, want %s", tc.constraint, selected(t, h), tc.want)
		}
	}

	h := newHost(t, Options{Dirs: []string{dir}})
	_, err := h.Open(config.Sandbox{Name: "sb", Mode: "test_direct", Version: "> 3.0"})
	if err == nil || !strings.Contains(err.Error(), `no plugin serves mode "test_direct" at version "> 3.0"`) {
		t.Fatalf("unsatisfiable constraint: %v", err)
	}
	_, err = h.Open(config.Sandbox{Name: "sb", Mode: "test_direct", Version: "about one"})
	if err == nil || !strings.Contains(err.Error(), `"about one"`) {
		t.Fatalf("bad constraint: %v", err)
	}
}

func TestUnversionedIsZero(t *testing.T) {
	dir := t.TempDir()
	dev := install(t, testPlugin, dir, "promptkit-sandbox-test")
	install(t, testPlugin, dir, "promptkit-sandbox-test_v0.1.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	open(t, h, config.Sandbox{Mode: "test_direct", Version: "< 0.1.0"})
	if got := selected(t, h); len(got) != 1 || got[0] != "test 0.0.0 "+dev {
		t.Fatalf("selected %v, want the unversioned build as 0.0.0", got)
	}
}

func TestVersionMismatchRefused(t *testing.T) {
	dir := t.TempDir()
	path := install(t, liarPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	_, err := h.Open(config.Sandbox{Name: "sb", Mode: "test_direct"})
	want := "plugin " + path + ": reports version 9.9.9 but its file name says 1.0.0; refused"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v\nwant it to contain %q", err, want)
	}
}

func TestJunkBeforeHandshake(t *testing.T) {
	dir := t.TempDir()
	path := install(t, junkPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	_, err := h.Open(config.Sandbox{Name: "sb", Mode: "test_direct"})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "hello-from-a-confused-plugin") {
		t.Fatalf("got %v; want an error naming the plugin and quoting what it printed", err)
	}
	if !errors.Is(err, sandbox.ErrStart) {
		t.Fatalf("got %v, want a start error", err)
	}
}

func TestWritablePluginRefused(t *testing.T) {
	dir := t.TempDir()
	path := install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	if err := os.Chmod(path, 0o775); err != nil {
		t.Fatal(err)
	}
	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}})
	_, err := h.Open(config.Sandbox{Name: "sb", Mode: "test_direct"})
	if err == nil || !strings.Contains(err.Error(), `no plugin serves mode "test_direct"`) {
		t.Fatalf("got %v", err)
	}
	c := h.Candidates()
	if len(c) != 1 || c[0].Usable() || !strings.Contains(c[0].Refused, "writable") {
		t.Fatalf("candidates %+v, want the file refused as writable", c)
	}
	if pids := st.pids(t); len(pids) != 0 {
		t.Fatalf("a refused plugin ran: %v", pids)
	}
}

func TestLockRefusesTamperedBinaryBeforeItRuns(t *testing.T) {
	dir := t.TempDir()
	path := install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	sum, err := discovery.SHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(t.TempDir(), lockfile.FileName)
	lock := &lockfile.Lock{}
	lock.Set("test", discovery.DevVersion(), strings.Repeat("0", 64)) // another plugin version
	h0 := newHost(t, Options{Dirs: []string{dir}})
	c := h0.Candidates()[0]
	lock.Set("test", c.Version, sum)
	if err := lockfile.Write(lockPath, lock); err != nil {
		t.Fatal(err)
	}

	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}, LockPath: lockPath})
	open(t, h, config.Sandbox{Mode: "test_direct"}) // the locked binary runs
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte("tampered"))
	f.Close()
	before := len(st.pids(t))
	h = newHost(t, Options{Dirs: []string{dir}, LockPath: lockPath})
	_, err = h.Open(config.Sandbox{Name: "sb", Mode: "test_direct"})
	var mm *lockfile.MismatchError
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), "does not match the lock file") {
		t.Fatalf("got %v, want a lock mismatch", err)
	}
	if after := len(st.pids(t)); after != before {
		t.Fatalf("the tampered binary ran (%d starts before, %d after)", before, after)
	}
}

func TestPinnedPlugin(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-alpha_v1.0.0")
	install(t, testPlugin, dir, "promptkit-sandbox-beta_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	_, err := h.Open(config.Sandbox{Name: "sb", Mode: "shared_echo"})
	if err == nil || !strings.Contains(err.Error(), `mode "shared_echo" is served by more than one plugin (alpha 1.0.0, beta 1.0.0); choose one with plugin: NAME`) {
		t.Fatalf("ambiguous mode: %v", err)
	}
	sb := open(t, h, config.Sandbox{Mode: "shared_echo", Plugin: "beta"})
	resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "x", Stdin: []byte("hi")})
	if err != nil || string(resp.Stdout) != "hi" || string(resp.Stderr) != "from beta" {
		t.Fatalf("pinned spawn: %q %q %v", resp.Stdout, resp.Stderr, err)
	}
}

func TestUnknownModeListsModesAndDirs(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	_, err := h.Open(config.Sandbox{Name: "sb", Mode: "nope"})
	want := `no plugin serves mode "nope"; plugin modes found: shared_echo, test_crash, test_deaf, test_direct, test_env, test_flaky, test_flood, test_hang, test_late, test_noop, test_stuck; searched: ` + dir
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	if !h.Serves("test_hang") || h.Serves("nope") {
		t.Fatal("Serves")
	}
}
