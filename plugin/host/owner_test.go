package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/plugin/lockfile"
)

// TestPluginOfAnotherUserDoesNotRun: root running the host from another
// user's project, whose ./.promptkit/plugins holds a plugin that user
// owns, does not run it, and says why; pinned in the lock file by its
// SHA-256, it runs.
func TestPluginOfAnotherUserDoesNotRun(t *testing.T) {
	proctest.RequireRoot(t) // only root can give a file to another user
	const otherUID = 12345
	proj := t.TempDir()
	dir := filepath.Join(proj, ".promptkit", "plugins")
	path := install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	if err := os.Chown(path, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	st := trackStarts(t)
	env := emptyEnv(t)
	env.WorkDir = proj // the default search path finds ./.promptkit/plugins
	h := newHost(t, Options{Env: env})
	_, err := h.Open(config.Sandbox{Name: "sb", Mode: "test_direct"})
	why := "file " + path + " is owned by uid 12345, not by you (uid 0 (root)) or root: its owner could replace what runs as you; " +
		"chown it (and every directory above it) to yourself or root, move the plugin to a directory you own, or pin it by SHA-256 in a lock file you or root own"
	if err == nil || !strings.Contains(err.Error(), `no plugin serves mode "test_direct"`) || !strings.Contains(err.Error(), "; refused "+path+": "+why) {
		t.Fatalf("Open: got %v, want no plugin to serve the mode, and why %s was refused", err, path)
	}
	if hint := h.ModeHint(); !strings.Contains(hint, "; refused "+path+": "+why) {
		t.Errorf("ModeHint (which ends an unknown-mode error) does not say why %s was refused: %s", path, hint)
	}
	var refused string
	for _, c := range h.Candidates() {
		if c.Path == path {
			refused = c.Refused
		}
	}
	if refused != why {
		t.Errorf("refusal of %s:\ngot  %q\nwant %q", path, refused, why)
	}
	if pids := st.pids(t); len(pids) != 0 {
		t.Fatalf("another user's plugin ran as root: pids %v", pids)
	}

	sum, err := discovery.SHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	lock := &lockfile.Lock{}
	lock.Set("test", h.Candidates()[0].Version, sum)
	lockPath := filepath.Join(t.TempDir(), lockfile.FileName)
	if err := lockfile.Write(lockPath, lock); err != nil {
		t.Fatal(err)
	}
	h = newHost(t, Options{Env: env, LockPath: lockPath})
	open(t, h, config.Sandbox{Mode: "test_direct"})
	if pids := st.pids(t); len(pids) != 1 {
		t.Fatalf("pinned plugin: %d starts, want 1", len(pids))
	}

	// A lock file the other user owns could vouch for anything they
	// like: its pins waive nothing.
	if err := os.Chown(lockPath, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	h = newHost(t, Options{Env: env, LockPath: lockPath})
	if _, err := h.Open(config.Sandbox{Name: "sb", Mode: "test_direct"}); err == nil || !strings.Contains(err.Error(), "; refused "+path+": "+why) {
		t.Fatalf("pinned by another user's lock file: Open got %v, want the plugin refused: %s", err, why)
	}
	if pids := st.pids(t); len(pids) != 1 {
		t.Fatalf("another user's lock file let their plugin run: %d starts, want 1", len(pids))
	}
}

// TestHostRefusesFIFOLockFile: a FIFO where the lock file should be fails
// New at once.
func TestHostRefusesFIFOLockFile(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), lockfile.FileName)
	if err := syscall.Mkfifo(lockPath, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := New(Options{Env: emptyEnv(t), NoCache: true, LockPath: lockPath})
		done <- err
	}()
	select {
	case err := <-done:
		if want := "read lock file: " + lockPath + " is not a regular file (a FIFO)"; err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	case <-time.After(5 * time.Second):
		if f, err := os.OpenFile(lockPath, os.O_WRONLY, 0); err == nil {
			_ = f.Close()
		}
		t.Fatal("New still blocked on a FIFO lock file after 5s")
	}
}

// TestLockedPluginRunsThroughItsHashedDescriptor: with a lock file in
// force the host runs the plugin through the descriptor it hashed; the
// plugin keeps its path as argv[0] and closes that descriptor, so the
// commands it runs do not inherit it.
func TestLockedPluginRunsThroughItsHashedDescriptor(t *testing.T) {
	dir := t.TempDir()
	path := install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	sum, err := discovery.SHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	lock := &lockfile.Lock{}
	v, _ := version.NewVersion("1.0.0")
	lock.Set("test", v, sum)
	lockPath := filepath.Join(t.TempDir(), lockfile.FileName)
	if err := lockfile.Write(lockPath, lock); err != nil {
		t.Fatal(err)
	}
	st := trackStarts(t)
	h := newHost(t, Options{Dirs: []string{dir}, LockPath: lockPath})
	open(t, h, config.Sandbox{Mode: "test_direct"})
	pids := st.pids(t)
	if len(pids) != 1 {
		t.Fatalf("%d plugin starts, want 1", len(pids))
	}
	proc := fmt.Sprintf("/proc/%d", pids[0])
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); argv0 != path {
		t.Errorf("argv[0] = %q, want %q", argv0, path)
	}
	if exe, err := os.Readlink(proc + "/exe"); err != nil || exe != path {
		t.Errorf("exe = %q, %v; want %q", exe, err, path)
	}
	fds, err := os.ReadDir(proc + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, _ := os.Readlink(proc + "/fd/" + fd.Name()); target == path {
			t.Errorf("the plugin still holds its binary open on fd %s", fd.Name())
		}
	}
}
