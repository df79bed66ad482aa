package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/plugin/lockfile"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// started reports which plugins (by name) a set of launches ran.
func (s starts) names(t testing.TB) []string {
	t.Helper()
	var names []string
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(s.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		name, _, _ := strings.Cut(string(b), " ")
		names = append(names, name)
		_ = os.Remove(filepath.Join(s.dir, e.Name()))
	}
	slices.Sort(names)
	return names
}

// spawnOK opens mode in a new host (a new command) and runs one call.
func spawnOK(t *testing.T, opts Options, mode string) {
	t.Helper()
	h := newHost(t, opts)
	sb := open(t, h, config.Sandbox{Name: "sb", Mode: mode})
	if _, err := sb.Spawn(context.Background(), sandbox.Request{Command: "true"}); err != nil {
		t.Fatalf("%s: %v", mode, err)
	}
	_ = h.Close()
}

// A command starts only the plugin that serves its mode once the cache
// knows what the others serve; a plugin that never completes its
// handshake beside it costs one start timeout, then nothing.
func TestCacheStartsOnlyWhatIsNeeded(t *testing.T) {
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-alpha_v1.0.0")
	install(t, testPlugin, dir, "promptkit-sandbox-beta_v1.0.0")
	stall := install(t, testPlugin, dir, "promptkit-sandbox-stall_v1.0.0")
	st := trackStarts(t)
	opts := Options{Dirs: []string{dir}, Env: emptyEnv(t), CacheDir: t.TempDir(), StartTimeout: time.Second}

	begin := time.Now()
	spawnOK(t, opts, "alpha_direct")
	if got, want := st.names(t), []string{"alpha", "beta"}; !slices.Equal(got, want) {
		t.Fatalf("first command started %v, want %v (and stall, which never says)", got, want)
	}
	first := time.Since(begin)

	begin = time.Now()
	spawnOK(t, opts, "alpha_direct")
	second := time.Since(begin)
	if got, want := st.names(t), []string{"alpha"}; !slices.Equal(got, want) {
		t.Fatalf("second command started %v, want %v", got, want)
	}
	if second > first/2 || second > 900*time.Millisecond {
		t.Errorf("second command took %v (first %v): the stalled plugin was waited for again", second, first)
	}

	// Without the cache, every plugin is asked again.
	noCache := opts
	noCache.NoCache = true
	spawnOK(t, noCache, "beta_direct")
	if got, want := st.names(t), []string{"alpha", "beta"}; !slices.Equal(got, want) {
		t.Fatalf("without the cache: started %v, want %v", got, want)
	}

	// A mode only the stalled plugin could serve tries it again at once,
	// and the error is its start's, not the memory of it.
	h := newHost(t, opts)
	_, err := h.Open(config.Sandbox{Name: "s", Mode: "stall_direct"})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "start plugin "+stall) ||
		strings.Contains(err.Error(), "not tried again") {
		t.Fatalf("err = %v, want the stalled plugin's own start failure", err)
	}
}

// An entry holds for the file it was made from: new content under the
// same size and modification time is asked again; the same content in a
// new file is not.
func TestCacheFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	path := install(t, testPlugin, dir, "promptkit-sandbox-alpha_v1.0.0")
	st := trackStarts(t)
	c := describeCache{dir: t.TempDir()}
	h := newHost(t, Options{Dirs: []string{dir}, Env: emptyEnv(t), CacheDir: c.dir})
	cand := discovery.Candidate{Name: "alpha", Path: path, Version: version.Must(version.NewVersion("1.0.0"))}
	if _, err := h.Describe(context.Background(), cand); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.load(path); !ok {
		t.Fatal("no entry after a start")
	}

	// The same bytes, copied over: a new inode and change time.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	replace := func(b []byte) {
		t.Helper()
		tmp := path + ".new"
		if err := os.WriteFile(tmp, b, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	replace(data)
	if e, ok := c.load(path); !ok || e.Description == nil || e.Description.Name != "alpha" {
		t.Fatalf("the same content in a new file: entry %+v, %v", e, ok)
	}

	// Other bytes of the same size and time.
	other := slices.Clone(data)
	other[len(other)-1] ^= 0xff
	replace(other)
	if _, ok := c.load(path); ok {
		t.Fatal("an entry held for other content")
	}
	_ = st.names(t)
}

// A cached description never stands in for a binary the lock file
// refuses.
func TestCacheKeepsTheLock(t *testing.T) {
	dir := t.TempDir()
	path := install(t, testPlugin, dir, "promptkit-sandbox-alpha_v1.0.0")
	opts := Options{Dirs: []string{dir}, Env: emptyEnv(t), CacheDir: t.TempDir()}
	spawnOK(t, opts, "alpha_direct")

	lock := filepath.Join(t.TempDir(), "plugins.lock")
	l := &lockfile.Lock{}
	l.Set("alpha", version.Must(version.NewVersion("1.0.0")), strings.Repeat("0", 64))
	if err := lockfile.Write(lock, l); err != nil {
		t.Fatal(err)
	}
	opts.LockPath = lock
	h := newHost(t, opts)
	_, err := h.Open(config.Sandbox{Name: "sb", Mode: "alpha_direct"})
	if err == nil || !strings.Contains(err.Error(), "refused to start plugin") {
		t.Fatalf("err = %v, want the lock's refusal of %s", err, path)
	}
}

// A start that stores what the cache already holds for the very same
// file does not hash the file again (a plugin's binary is tens of
// megabytes: the hash cost its cold start 13 ms); a file whose identity
// moved is hashed. The entry's hash is replaced by a marker to tell.
func TestCacheStoreHashesOnlyAMovedFile(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "promptkit-sandbox-x_v1.0.0")
	if err := os.WriteFile(bin, []byte("a plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := describeCache{dir: filepath.Join(dir, "cache")}
	d := plugin.Description{Name: "x", Version: "1.0.0"}
	c.storeDescription(bin, d)
	e, ok := c.read(bin)
	if want, _ := discovery.SHA256(bin); !ok || e.SHA256 != want {
		t.Fatalf("stored %+v, %v; want the file's hash %s", e, ok, want)
	}
	e.SHA256 = "marker"
	c.write(e)

	c.storeDescription(bin, d)
	if e, _ := c.read(bin); e.SHA256 != "marker" {
		t.Errorf("the same file was hashed again: %q", e.SHA256)
	}
	d.Version = "1.0.1"
	c.storeDescription(bin, d)
	if e, _ := c.read(bin); e.SHA256 != "marker" || e.Description.Version != "1.0.1" {
		t.Errorf("a new description of the same file: %+v", e)
	}

	// The same bytes written again: the change time moves, so the
	// file is hashed.
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(bin, []byte("a plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.storeDescription(bin, d)
	if e, _ := c.read(bin); e.SHA256 == "marker" {
		t.Error("a rewritten file was not hashed")
	}
}
