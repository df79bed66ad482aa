package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/escapetest"
)

// fixture is escapetest's layout, opened as a workspace.
type fixture struct {
	*escapetest.Fixture
	w *Workspace
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{Fixture: escapetest.New(t)}
	w, err := Open(f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	f.w = w
	return f
}

func TestLegitimatePathsWork(t *testing.T) {
	f := newFixture(t)
	for path, want := range f.Legit() {
		got, err := f.w.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
}

func TestEscapesAreRefused(t *testing.T) {
	f := newFixture(t)
	paths := f.Escapes()
	if len(paths) < 30 {
		t.Fatalf("only %d escape attempts", len(paths))
	}
	for _, path := range paths {
		got, err := f.w.ReadFile(path)
		if err == nil || strings.Contains(string(got), "SECRET") {
			t.Errorf("ReadFile(%q) = %q, %v: reached outside", path, got, err)
			continue
		}
		if !IsOutside(err) || !strings.Contains(err.Error(), "is outside the workspace") {
			t.Errorf("ReadFile(%q): %v: not an outside-the-workspace error", path, err)
		}
		if _, err := f.w.Stat(path); !IsOutside(err) {
			t.Errorf("Stat(%q): %v", path, err)
		}
		if err := f.w.WriteFile(path, []byte("pwned"), 0o644); !IsOutside(err) {
			t.Errorf("WriteFile(%q): %v", path, err)
		}
	}
	if got, _ := os.ReadFile(f.Secret); string(got) != escapetest.Secret {
		t.Fatalf("the secret was overwritten: %q", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(f.Secret)); len(entries) != 1 {
		t.Fatalf("files appeared outside: %v", entries)
	}
}

func TestBadPaths(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"", "file\x00.txt"} {
		if _, err := f.w.ReadFile(path); err == nil {
			t.Errorf("ReadFile(%q): no error", path)
		}
	}
	if _, err := f.w.ReadFile("missing.txt"); !errors.Is(err, fs.ErrNotExist) || IsOutside(err) {
		t.Errorf("missing file: %v", err)
	}
}

func TestWriteFileAtomicKeepsModeCreatesParents(t *testing.T) {
	f := newFixture(t)
	script := filepath.Join(f.Dir, "run.sh")
	if err := os.WriteFile(script, []byte("old"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := f.w.WriteFile("run.sh", []byte("#!/bin/sh\necho new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(script)
	if got, _ := os.ReadFile(script); string(got) != "#!/bin/sh\necho new\n" || fi.Mode().Perm() != 0o750 {
		t.Errorf("content %q mode %v", got, fi.Mode().Perm())
	}
	if err := f.w.WriteFile("new/deep/file.go", []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(f.Dir, "new/deep/file.go"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("new file: %v %v", fi, err)
	}
	// Through an in-root symlink the target is replaced, the link kept.
	if err := f.w.WriteFile("in-link", []byte("via link"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.Dir, "file.txt")); string(got) != "via link" {
		t.Errorf("target = %q", got)
	}
	if fi, _ := os.Lstat(filepath.Join(f.Dir, "in-link")); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if err := f.w.WriteFile("dir", []byte("x"), 0o644); err == nil {
		t.Error("writing over a directory: no error")
	}
	// No temporary files are left behind.
	matches, _ := filepath.Glob(filepath.Join(f.Dir, "*", ".*.tmp-*"))
	top, _ := filepath.Glob(filepath.Join(f.Dir, ".*.tmp-*"))
	if len(matches)+len(top) > 0 {
		t.Errorf("temporary files left: %v %v", matches, top)
	}
}

// TestSymlinkSwappedInWhileReading swaps a directory inside the
// workspace for a symlink out of it, over and over, while reads and
// writes go through it: none may reach the outside.
func TestSymlinkSwappedInWhileReading(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Dir(f.Secret)
	if err := os.WriteFile(filepath.Join(outside, "target.txt"), []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	swap := filepath.Join(f.Dir, "swap")
	if err := os.Mkdir(swap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(swap, "target.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		asDir, asLink := swap+".dir", swap+".link"
		_ = os.Symlink(outside, asLink)
		for !stop.Load() {
			_ = os.Rename(swap, asDir)
			_ = os.Rename(asLink, swap)
			_ = os.Rename(swap, asLink)
			_ = os.Rename(asDir, swap)
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	reads, insides := 0, 0
	for time.Now().Before(deadline) {
		got, err := f.w.ReadFile("swap/target.txt")
		reads++
		if strings.Contains(string(got), "SECRET") {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("read %d reached outside through the swapped symlink", reads)
		}
		if err == nil {
			insides++
		}
		_ = f.w.WriteFile("swap/target.txt", []byte("inside"), 0o644)
	}
	stop.Store(true)
	wg.Wait()
	if got, _ := os.ReadFile(filepath.Join(outside, "target.txt")); string(got) != escapetest.Secret {
		t.Fatalf("a write went outside: %q", got)
	}
	if insides == 0 {
		t.Errorf("no read of %d saw the file inside (the swap never let it through)", reads)
	}
	t.Logf("%d reads, %d inside, none outside", reads, insides)
}

// TestAbsoluteSymlinks: an absolute symlink is judged by where it leads,
// as a relative one is: inside, it works for reading, writing and
// creating directories; out, or through a link that leads out, it is
// refused. A chain is judged by its final target.
func TestAbsoluteSymlinks(t *testing.T) {
	f := newFixture(t)
	ws := f.Dir
	for link, to := range map[string]string{
		"abs-dir":        ws + "/dir",
		"abs-chain":      ws + "/chain1", // absolute, then relative twice
		"rel-to-abs":     "abs-in",       // relative, then absolute
		"abs-dotdot":     ws + "/dir/../file.txt",
		"abs-slashes":    ws + "//./dir//nested.txt",
		"abs-new":        ws + "/dir/created.txt", // dangling: a write creates it
		"abs-out-dotdot": ws + "/../outside/secret",
		"abs-via-out":    ws + "/out-rel",
		"abs-up":         ws + "/dir/up/..",
		"abs-prefix":     ws + "-sibling/file",
		"abs-proc":       "/proc/self/root" + ws + "/file.txt",
		"dir/abs-loop":   ws + "/dir/abs-loop",
	} {
		if err := os.Symlink(to, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		"abs-in":             "inside",
		"abs-dir/nested.txt": "nested",
		"abs-chain":          "inside",
		"rel-to-abs":         "inside",
		"abs-dotdot":         "inside",
		"abs-slashes":        "nested",
		ws + "/abs-in":       "inside",
		"dir-link/../abs-in": "inside",
	} {
		got, err := f.w.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", path, got, err, want)
		}
		if fi, err := f.w.Stat(path); err != nil || fi.Size() != int64(len(want)) {
			t.Errorf("Stat(%q) = %v, %v", path, fi, err)
		}
	}
	if fi, err := f.w.Lstat("abs-dir/nested.txt"); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("Lstat through an absolute link: %v, %v", fi, err)
	}
	if fi, err := f.w.Lstat("abs-in"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(abs-in) = %v, %v; want the link itself", fi, err)
	}
	if err := f.w.WriteFile("abs-in", []byte("via abs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "file.txt")); string(got) != "via abs" {
		t.Errorf("file.txt = %q after a write through abs-in", got)
	}
	if fi, _ := os.Lstat(filepath.Join(ws, "abs-in")); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the absolute symlink was replaced by a file")
	}
	for _, path := range []string{"abs-dir/sub/new.txt", "abs-new"} {
		if err := f.w.WriteFile(path, []byte(path), 0o644); err != nil {
			t.Errorf("WriteFile(%q): %v", path, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "dir/sub/new.txt")); string(got) != "abs-dir/sub/new.txt" {
		t.Errorf("dir/sub/new.txt = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "dir/created.txt")); string(got) != "abs-new" {
		t.Errorf("dir/created.txt = %q", got)
	}
	if err := f.w.MkdirAll("abs-dir/made/here", 0o755); err != nil {
		t.Error(err)
	} else if fi, err := os.Stat(filepath.Join(ws, "dir/made/here")); err != nil || !fi.IsDir() {
		t.Errorf("MkdirAll through an absolute link: %v, %v", fi, err)
	}
	fh, err := f.w.Open("abs-dir")
	if err != nil {
		t.Fatal(err)
	}
	names, _ := fh.Readdirnames(-1)
	fh.Close()
	if !slices.Contains(names, "nested.txt") {
		t.Errorf("Open(abs-dir) lists %v", names)
	}

	for _, path := range []string{"abs-out-dotdot", "abs-via-out", "abs-up/outside/secret", "abs-prefix", "abs-proc", "abs-dir/upup/outside/secret"} {
		if got, err := f.w.ReadFile(path); !IsOutside(err) {
			t.Errorf("ReadFile(%q) = %q, %v; want outside", path, got, err)
		}
		if err := f.w.WriteFile(path, []byte("pwned"), 0o644); !IsOutside(err) {
			t.Errorf("WriteFile(%q): %v; want outside", path, err)
		}
	}
	if _, err := f.w.ReadFile("dir/abs-loop"); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Errorf("a loop of absolute links: %v", err)
	}
	if got, _ := os.ReadFile(f.Secret); string(got) != escapetest.Secret {
		t.Fatalf("the secret was overwritten: %q", got)
	}
}

// TestPathLimits: a path longer than MaxPathLen or deeper than
// MaxPathDepth is refused with a *LimitError whose message quotes only
// its start, and a refused write creates nothing.
func TestPathLimits(t *testing.T) {
	f := newFixture(t)
	name := strings.Repeat("n", 255)
	// 4095 bytes, 17 deep; the last name leaves room for Write's
	// temporary file beside it.
	long := strings.Repeat(name+"/", 15) + strings.Repeat("m", 55) + "/" + strings.Repeat("f", 199)
	deep := strings.Repeat("d/", MaxPathDepth-1) + "f" // 64 deep
	for _, path := range []string{long, deep, f.Dir + "/" + deep} {
		if err := f.w.WriteFile(path, []byte("ok"), 0o644); err != nil {
			t.Errorf("WriteFile of %d bytes: %.300v", len(path), err)
		}
	}
	before, _ := os.ReadDir(f.Dir)
	for _, c := range []struct {
		path, want string
	}{
		{strings.Repeat("a/", 50000), "is 100000 bytes long; a workspace path may be at most 4096"},
		{long + "xx", "is 4097 bytes long; a workspace path may be at most 4096"},
		{"x/" + deep, "is 65 directories deep; a workspace path may be at most 64"},
		{f.Dir + "/x/" + deep, "is 65 directories deep; a workspace path may be at most 64"},
	} {
		for op, fn := range map[string]func(string) error{
			"WriteFile": func(p string) error { return f.w.WriteFile(p, []byte("x"), 0o644) },
			"ReadFile":  func(p string) error { _, err := f.w.ReadFile(p); return err },
			"MkdirAll":  func(p string) error { return f.w.MkdirAll(p, 0o755) },
			"Stat":      func(p string) error { _, err := f.w.Stat(p); return err },
		} {
			err := fn(c.path)
			var le *LimitError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 300 {
				t.Errorf("%s of a %d-byte path: %.300v; want a *LimitError saying %q, briefly", op, len(c.path), err, c.want)
			}
		}
	}
	after, _ := os.ReadDir(f.Dir)
	if len(after) != len(before) {
		t.Errorf("refused paths created %d entries", len(after)-len(before))
	}
	// Symlinks cannot take a path past the depth either.
	link := filepath.Join(f.Dir, "deep-link")
	if err := os.Symlink(strings.Repeat("e/", MaxPathDepth), link); err != nil {
		t.Fatal(err)
	}
	if err := f.w.WriteFile("deep-link/f", []byte("x"), 0o644); !errors.As(err, new(*LimitError)) {
		t.Errorf("a write through a link past the depth: %v", err)
	}
}
