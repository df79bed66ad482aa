package reportdir

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

var nobody = &syscall.Credential{Uid: 65534, Gid: 65534}

// asNobody runs a shell script as UID 65534 and returns its output.
func asNobody(t *testing.T, script string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	cmd.Dir = "/"
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// canary is a root-only file (0600) outside the directory, holding a
// unique line.
func canary(t *testing.T) (path, secret string) {
	t.Helper()
	secret = "CANARY-" + filepath.Base(t.TempDir())
	path = filepath.Join(t.TempDir(), "canary")
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, secret
}

// TestOwnerWritesButCannotReplace: the owner writes the file in place
// (truncating it, as pytest and go test do) and it reads back; it can
// neither rename, remove nor symlink over it, nor list the directory.
func TestOwnerWritesButCannotReplace(t *testing.T) {
	proctest.RequireRoot(t)
	d, err := New("reportdir-test-", nobody)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Remove()
	p, err := d.File("report")
	if err != nil {
		t.Fatal(err)
	}
	target, _ := canary(t)
	out := asNobody(t, "echo written > "+p+"; echo w=$?; ln -sf "+target+" "+p+" 2>/dev/null; echo ln=$?; "+
		"mv "+p+" "+p+".x 2>/dev/null; echo mv=$?; rm -f "+p+" 2>/dev/null; echo rm=$?; ls "+d.Path()+" >/dev/null 2>&1; echo ls=$?; "+
		"touch "+d.Path()+"/new 2>/dev/null; echo touch=$?")
	if want := "w=0\nln=1\nmv=1\nrm=1\nls=2\ntouch=1\n"; out != want {
		t.Errorf("as the owner:\n%s\nwant:\n%s", out, want)
	}
	got, err := d.Read("report", 1<<20)
	if err != nil || string(got) != "written\n" {
		t.Errorf("Read: %q, %v", got, err)
	}
	sub, err := d.Subdir("build")
	if err != nil {
		t.Fatal(err)
	}
	if out := asNobody(t, "echo x > "+sub+"/bin && echo ok"); out != "ok\n" {
		t.Errorf("writing in the owner's subdirectory: %q", out)
	}
}

// TestReadRefusesWhatIsNotTheFileMade: a symlink, a hard link, a file
// renamed over it and a FIFO in its place are refused (at once, for the
// FIFO), never read; nothing written reads as nil.
func TestReadRefusesWhatIsNotTheFileMade(t *testing.T) {
	target, secret := canary(t)
	for name, swap := range map[string]func(p string) error{
		"symlink": func(p string) error { os.Remove(p); return os.Symlink(target, p) },
		"hard link": func(p string) error {
			os.Remove(p)
			return os.Link(target, p)
		},
		"renamed over": func(p string) error {
			other := p + ".other"
			if err := os.WriteFile(other, []byte(secret), 0o600); err != nil {
				return err
			}
			return os.Rename(other, p)
		},
		"fifo":           func(p string) error { os.Remove(p); return syscall.Mkfifo(p, 0o600) },
		"second link to": func(p string) error { return os.Link(p, p+".2") },
	} {
		t.Run(name, func(t *testing.T) {
			d, err := New("reportdir-test-", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Remove()
			p, err := d.File("report")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(secret), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := swap(p); err != nil {
				t.Fatal(err)
			}
			got, err := d.Read("report", 1<<20)
			if !errors.Is(err, ErrReplaced) || strings.Contains(string(got), secret) || got != nil {
				t.Errorf("Read: %q, %v; want ErrReplaced", got, err)
			}
		})
	}

	d, err := New("reportdir-test-", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Remove()
	if _, err := d.File("report"); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Read("report", 1<<20); got != nil || err != nil {
		t.Errorf("nothing written: %q, %v", got, err)
	}
	if _, err := d.Read("other", 1<<20); err == nil {
		t.Error("Read of a file not made here succeeded")
	}
	for _, bad := range []string{"", ".", "..", "a/b"} {
		if _, err := d.File(bad); err == nil {
			t.Errorf("File(%q) succeeded", bad)
		}
	}
}
