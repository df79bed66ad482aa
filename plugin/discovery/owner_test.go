package discovery

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// otherUID owns the files of "another user" in these tests: no account
// needs to exist for it.
const otherUID = 12345

// requireRoot: only root can give a file to another user.
func requireRoot(t *testing.T) {
	t.Helper()
	proctest.RequireRoot(t)
}

func chown(t *testing.T, path string, uid int) {
	t.Helper()
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// foreignMsg is the refusal of what, owned by otherUID, as root sees it.
func foreignMsg(what string) string {
	return what + " is owned by uid 12345, not by you (uid 0 (root)) or root: its owner could replace what runs as you; " +
		"chown it (and every directory above it) to yourself or root, move the plugin to a directory you own, or pin it by SHA-256 in a lock file you or root own"
}

// TestScanRefusesPluginsOfOtherUsers: as root, a plugin file another user
// owns is refused, and so is every plugin in a directory, or under a
// directory, another user owns: its owner can swap the file, or rename
// the directory and put another in its place.
func TestScanRefusesPluginsOfOtherUsers(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	mkdir(t, root+"/mine", 0o755)
	writeFile(t, root+"/mine/promptkit-sandbox-ok_v1.0.0", 0o755)
	writeFile(t, root+"/mine/promptkit-sandbox-theirs_v1.0.0", 0o755)
	chown(t, root+"/mine/promptkit-sandbox-theirs_v1.0.0", otherUID)

	mkdir(t, root+"/theirdir", 0o755)
	writeFile(t, root+"/theirdir/promptkit-sandbox-indir", 0o755)
	chown(t, root+"/theirdir", otherUID)

	// ./.promptkit/plugins in another user's project: the plugin and its
	// directory are root's, the project above them is not.
	mkdir(t, root+"/proj/.promptkit/plugins", 0o755)
	writeFile(t, root+"/proj/.promptkit/plugins/promptkit-sandbox-below", 0o755)
	chown(t, root+"/proj", otherUID)

	// A symlink to a file another user owns is judged by the file.
	mkdir(t, root+"/links", 0o755)
	symlink(t, root+"/mine/promptkit-sandbox-theirs_v1.0.0", root+"/links/promptkit-sandbox-link")

	r, err := Scan([]string{root + "/mine", root + "/theirdir", root + "/proj/.promptkit/plugins", root + "/links"})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, summary(r.Candidates, root), []string{
		"ok 1.0.0 ($R/mine/promptkit-sandbox-ok_v1.0.0)",
		"theirs 1.0.0 ($R/mine/promptkit-sandbox-theirs_v1.0.0): " + foreignMsg("file $R/mine/promptkit-sandbox-theirs_v1.0.0"),
		"indir 0.0.0 ($R/theirdir/promptkit-sandbox-indir): " + foreignMsg("directory $R/theirdir"),
		"below 0.0.0 ($R/proj/.promptkit/plugins/promptkit-sandbox-below): " + foreignMsg("directory $R/proj"),
		"link 0.0.0 ($R/links/promptkit-sandbox-link): " + foreignMsg("symlink target $R/mine/promptkit-sandbox-theirs_v1.0.0"),
	})
}

// TestScanPinnedWaivesOnlyOwnership: a pin lets another user's plugin
// run, but not one refused for anything else as well.
func TestScanPinnedWaivesOnlyOwnership(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	mkdir(t, root+"/p", 0o755)
	writeFile(t, root+"/p/promptkit-sandbox-theirs", 0o755)
	writeFile(t, root+"/p/promptkit-sandbox-writable", 0o777)
	writeFile(t, root+"/p/promptkit-sandbox-unpinned", 0o755)
	for _, f := range []string{"theirs", "writable", "unpinned"} {
		chown(t, root+"/p/promptkit-sandbox-"+f, otherUID)
	}
	var asked []string
	r, err := ScanPinned([]string{root + "/p"}, func(c Candidate) bool {
		asked = append(asked, c.Name)
		return c.Name != "unpinned"
	})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, summary(r.Candidates, root), []string{
		"theirs 0.0.0 ($R/p/promptkit-sandbox-theirs)",
		"unpinned 0.0.0 ($R/p/promptkit-sandbox-unpinned): " + foreignMsg("file $R/p/promptkit-sandbox-unpinned"),
		"writable 0.0.0 ($R/p/promptkit-sandbox-writable): file is writable by group or others (mode -rwxrwxrwx)",
	})
	if got := strings.Join(asked, ","); got != "theirs,unpinned" {
		t.Errorf("pin asked about %s, want theirs,unpinned (never about a file refused for more)", got)
	}
}

// TestScanRefusesFIFOAtOnce: a FIFO named like a plugin is refused
// without being opened, and hashing one fails at once instead of waiting
// for a writer.
func TestScanRefusesFIFOAtOnce(t *testing.T) {
	root := t.TempDir()
	mkdir(t, root+"/p", 0o755)
	path := root + "/p/promptkit-sandbox-fifo_v1.0.0"
	if err := syscall.Mkfifo(path, 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		// Should anything open the FIFO to read, this lets it go once
		// the test has failed, so the test binary can end.
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
				_ = f.Close()
			}
		}
	}()
	start := time.Now()
	r, err := Scan([]string{root + "/p"})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, summary(r.Candidates, root), []string{
		"fifo 1.0.0 ($R/p/promptkit-sandbox-fifo_v1.0.0): file is not a regular file (mode prwxr-xr-x)",
	})
	_, err = SHA256(path)
	if want := "hash plugin file: " + path + " is not a regular file (a FIFO)"; err == nil || err.Error() != want {
		t.Errorf("SHA256: got %v, want %s", err, want)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v, want at once", took)
	}
}
