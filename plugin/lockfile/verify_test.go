package lockfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
)

// installed writes a plugin file and returns its path and SHA-256.
func installed(t *testing.T, content string) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "promptkit-sandbox-docker_v1.2.0")
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := discovery.SHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, sum
}

// lockedOnDisk writes l beside a config and reads it back, as the host does.
func lockedOnDisk(t *testing.T, l *Lock) *Lock {
	t.Helper()
	path := Path(t.TempDir())
	if err := Write(path, l); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestVerifyOK(t *testing.T) {
	path, sum := installed(t, "plugin v1.2.0")
	l := &Lock{}
	l.Set("docker", v("1.2.0"), sum)
	if err := lockedOnDisk(t, l).Verify("docker", v("1.2.0"), path); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestVerifyMismatch(t *testing.T) {
	path, sum := installed(t, "plugin v1.2.0")
	l := &Lock{}
	l.Set("docker", v("1.2.0"), sum)
	l = lockedOnDisk(t, l)
	if err := os.WriteFile(path, []byte("tampered"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, _ := discovery.SHA256(path)
	err := l.Verify("docker", v("1.2.0"), path)
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want *MismatchError", err)
	}
	want := &MismatchError{Name: "docker", Version: "1.2.0", Path: path, Want: sum, Got: got}
	if !reflect.DeepEqual(me, want) {
		t.Errorf("got %+v, want %+v", me, want)
	}
	msg := "plugin docker 1.2.0 at " + path + ": SHA-256 " + got[:12] + "… does not match the lock file's " + sum[:12] +
		"…; if you upgraded it on purpose, run promptkit-sandbox plugins lock"
	if err.Error() != msg {
		t.Errorf("message:\ngot  %s\nwant %s", err, msg)
	}
}

func TestVerifyNotLocked(t *testing.T) {
	path, sum := installed(t, "plugin v1.2.0")
	l := &Lock{}
	l.Set("docker", v("1.1.0"), sum)
	l.Set("docker", v("1.0.0"), sum)
	l.Set("kubectl", v("1.2.0"), sum)
	l = lockedOnDisk(t, l)

	err := l.Verify("docker", v("1.2.0"), path)
	var nl *NotLockedError
	if !errors.As(err, &nl) {
		t.Fatalf("got %v, want *NotLockedError", err)
	}
	if want := (&NotLockedError{Name: "docker", Version: "1.2.0", Path: path, Locked: []string{"1.0.0", "1.1.0"}}); !reflect.DeepEqual(nl, want) {
		t.Errorf("got %+v, want %+v", nl, want)
	}
	if want := "plugin docker 1.2.0 at " + path + " is not in the lock file (it locks docker 1.0.0, 1.1.0); run promptkit-sandbox plugins lock"; err.Error() != want {
		t.Errorf("message:\ngot  %s\nwant %s", err, want)
	}

	err = l.Verify("podman", v("1.2.0"), path)
	if want := "plugin podman 1.2.0 at " + path + " is not in the lock file; run promptkit-sandbox plugins lock"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if err := l.Verify("docker", nil, path); !errors.As(err, &nl) {
		t.Errorf("no version: got %v, want *NotLockedError", err)
	}
}

func TestVerifyMissingFile(t *testing.T) {
	path, sum := installed(t, "plugin v1.2.0")
	l := &Lock{}
	l.Set("docker", v("1.2.0"), sum)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	err := l.Verify("docker", v("1.2.0"), path)
	var me *MismatchError
	if !errors.Is(err, fs.ErrNotExist) || errors.As(err, &me) {
		t.Errorf("got %v, want a not-exist error", err)
	}
}

func TestVerifyNilLockEnforcesNothing(t *testing.T) {
	var l *Lock
	if err := l.Verify("docker", v("1.2.0"), "/does/not/matter"); err != nil {
		t.Errorf("got %v", err)
	}
}
