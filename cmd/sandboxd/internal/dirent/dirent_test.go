package dirent

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tree is a directory open as a descriptor, with a regular file "file"
// (holding "content"), a directory "dir", a secret outside it and the
// directory's path.
func tree(t *testing.T) (dirfd int, dir, secret string) {
	t.Helper()
	dir = t.TempDir()
	secret = filepath.Join(t.TempDir(), "secret")
	for p, content := range map[string]string{filepath.Join(dir, "file"): "content", secret: "secret"} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(dirfd) })
	return dirfd, dir, secret
}

func lstat(t *testing.T, dirfd int, name string) *unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		t.Fatal(err)
	}
	return &st
}

// openCheck opens and checks name as a caller does, closing what it
// opened.
func openCheck(t *testing.T, dirfd int, name string, flags int, want Want) (unix.Stat_t, error) {
	t.Helper()
	fd, err := Open(dirfd, name, flags)
	if err != nil {
		return unix.Stat_t{}, err
	}
	defer unix.Close(fd)
	return Check(fd, want)
}

// TestOpenOpensTheEntryListed: a regular file and a directory open and
// pass every check they meet; the stat returned is the descriptor's,
// fresher than the listing's.
func TestOpenOpensTheEntryListed(t *testing.T) {
	dirfd, dir, _ := tree(t)
	like := lstat(t, dirfd, "file")
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("longer content"), 0o600); err != nil {
		t.Fatal(err)
	}
	uid := uint32(os.Geteuid())
	fd, err := Open(dirfd, "file", unix.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	st, err := Check(fd, Want{Type: unix.S_IFREG, Like: like, OneLink: true, Owner: &uid})
	if err != nil || st.Ino != like.Ino || st.Size != int64(len("longer content")) {
		t.Fatalf("Check: ino %d size %d, %v; want ino %d size 14", st.Ino, st.Size, err, like.Ino)
	}
	buf := make([]byte, 64)
	if n, err := unix.Read(fd, buf); err != nil || string(buf[:n]) != "longer content" {
		t.Errorf("read %q, %v", buf[:n], err)
	}
	// Close-on-exec: a command sandboxd starts does not inherit it.
	if fdf, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fdf&unix.FD_CLOEXEC == 0 {
		t.Errorf("F_GETFD = %#x, %v; want FD_CLOEXEC", fdf, err)
	}

	// A directory has more than one link; OneLink asks that of regular
	// files only.
	if _, err := openCheck(t, dirfd, "dir", unix.O_RDONLY|unix.O_DIRECTORY, Want{Type: unix.S_IFDIR, Like: lstat(t, dirfd, "dir"), OneLink: true}); err != nil {
		t.Errorf("the directory: %v", err)
	}
}

// TestOpenRefusesASymlink: a symlink in the name's place is never
// followed: ELOOP, or ENOTDIR with O_DIRECTORY (the link itself is not a
// directory), whether it leads to a file or a directory.
func TestOpenRefusesASymlink(t *testing.T) {
	dirfd, dir, secret := tree(t)
	for name, target := range map[string]string{"to-file": secret, "to-dir": filepath.Dir(secret)} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if fd, err := Open(dirfd, "to-file", unix.O_RDONLY); !errors.Is(err, unix.ELOOP) {
		unix.Close(fd)
		t.Errorf("a symlink to a file: %v, want ELOOP", err)
	}
	if fd, err := Open(dirfd, "to-dir", unix.O_RDONLY); !errors.Is(err, unix.ELOOP) {
		unix.Close(fd)
		t.Errorf("a symlink to a directory: %v, want ELOOP", err)
	}
	if fd, err := Open(dirfd, "to-dir", unix.O_RDONLY|unix.O_DIRECTORY); !errors.Is(err, unix.ENOTDIR) {
		unix.Close(fd)
		t.Errorf("a symlink to a directory, with O_DIRECTORY: %v, want ENOTDIR", err)
	}
}

// TestOpenRefusesWhatIsNotOneEntry: "", ".", ".." and a name with a "/"
// (whose first component would be followed were it a symlink: here it
// is one, to the secret's directory) are refused, nothing opened.
func TestOpenRefusesWhatIsNotOneEntry(t *testing.T) {
	dirfd, dir, secret := tree(t)
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", ".", "..", "out/secret", "dir/", "/etc/passwd"} {
		fd, err := Open(dirfd, name, unix.O_RDONLY)
		if err == nil {
			unix.Close(fd)
			t.Errorf("Open(%q) opened it", name)
			continue
		}
		if want := `"` + name + `" is not the name of an entry in a directory`; err.Error() != want {
			t.Errorf("Open(%q): %v", name, err)
		}
	}
}

// TestOpenDoesNotHangOnAFIFO: a FIFO with no writer opens at once, and
// is refused for not being the regular file wanted.
func TestOpenDoesNotHangOnAFIFO(t *testing.T) {
	dirfd, dir, _ := tree(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	type result struct {
		st  unix.Stat_t
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := openCheck(t, dirfd, "fifo", unix.O_RDONLY, Want{Type: unix.S_IFREG})
		done <- result{st, err}
	}()
	select {
	case r := <-done:
		if !errors.Is(r.err, ErrChanged) || r.st.Mode&unix.S_IFMT != unix.S_IFIFO {
			t.Errorf("the FIFO: mode %#o, %v; want a FIFO's stat and ErrChanged", r.st.Mode, r.err)
		}
	case <-time.After(5 * time.Second):
		// Unblock the open, so the goroutine ends.
		if w, err := os.OpenFile(filepath.Join(dir, "fifo"), os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("opening a FIFO blocked")
	}
}

// TestCheckRefusesTheWrongType: a directory is not the regular file
// wanted, nor a file the directory; a listing of another type is not
// the entry opened even at its device and inode (an inode reused).
func TestCheckRefusesTheWrongType(t *testing.T) {
	dirfd, _, _ := tree(t)
	if _, err := openCheck(t, dirfd, "dir", unix.O_RDONLY, Want{Type: unix.S_IFREG}); !errors.Is(err, ErrChanged) {
		t.Errorf("a directory as a regular file: %v, want ErrChanged", err)
	}
	if _, err := openCheck(t, dirfd, "file", unix.O_RDONLY, Want{Type: unix.S_IFDIR}); !errors.Is(err, ErrChanged) {
		t.Errorf("a file as a directory: %v, want ErrChanged", err)
	}
	if _, err := Open(dirfd, "file", unix.O_RDONLY|unix.O_DIRECTORY); !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("a file opened with O_DIRECTORY: %v, want ENOTDIR", err)
	}
	reused := *lstat(t, dirfd, "file")
	reused.Mode = reused.Mode&^unix.S_IFMT | unix.S_IFDIR
	if _, err := openCheck(t, dirfd, "file", unix.O_RDONLY, Want{Like: &reused}); !errors.Is(err, ErrChanged) {
		t.Errorf("listed as a directory, opened a file: %v, want ErrChanged", err)
	}
}

// TestCheckRefusesASwappedFile: a file renamed over the one listed, and
// a directory swapped for another, are refused though their names and
// types are as listed.
func TestCheckRefusesASwappedFile(t *testing.T) {
	dirfd, dir, secret := tree(t)
	like := lstat(t, dirfd, "file")
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("other"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	if _, err := openCheck(t, dirfd, "file", unix.O_RDONLY, Want{Type: unix.S_IFREG, Like: like}); !errors.Is(err, ErrChanged) {
		t.Errorf("a file renamed over it: %v, want ErrChanged", err)
	}

	likeDir := lstat(t, dirfd, "dir")
	if err := os.Rename(filepath.Join(dir, "dir"), filepath.Join(dir, "was-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := openCheck(t, dirfd, "dir", unix.O_RDONLY|unix.O_DIRECTORY, Want{Like: likeDir}); !errors.Is(err, ErrChanged) {
		t.Errorf("another directory in its place: %v, want ErrChanged", err)
	}

	// A hard link to a file outside, in the place of the one listed.
	if err := os.Remove(filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(dir, "file")); err != nil {
		t.Fatal(err)
	}
	if _, err := openCheck(t, dirfd, "file", unix.O_RDONLY, Want{Like: like}); !errors.Is(err, ErrChanged) {
		t.Errorf("a hard link in its place: %v, want ErrChanged", err)
	}
}

// TestCheckRefusesASecondLinkAndAnotherOwner: the very file listed is
// refused once it has a second name (OneLink), and when it is not the
// owner's.
func TestCheckRefusesASecondLinkAndAnotherOwner(t *testing.T) {
	dirfd, dir, _ := tree(t)
	like := lstat(t, dirfd, "file")
	other := like.Uid + 1
	if _, err := openCheck(t, dirfd, "file", unix.O_RDONLY, Want{Like: like, Owner: &other}); !errors.Is(err, ErrChanged) {
		t.Errorf("owned by another: %v, want ErrChanged", err)
	}
	if err := os.Link(filepath.Join(dir, "file"), filepath.Join(dir, "second")); err != nil {
		t.Fatal(err)
	}
	if _, err := openCheck(t, dirfd, "file", unix.O_RDONLY, Want{Like: like}); err != nil {
		t.Errorf("two links, OneLink not asked: %v", err)
	}
	st, err := openCheck(t, dirfd, "file", unix.O_RDONLY, Want{Like: like, OneLink: true})
	if !errors.Is(err, ErrChanged) || st.Nlink != 2 {
		t.Errorf("two links: nlink %d, %v; want 2 and ErrChanged", st.Nlink, err)
	}
}
