package sandboxdimage

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/codegenimage"
)

func TestInReleaseFile(t *testing.T) {
	for line, want := range map[string]string{
		"deb http://deb.debian.org/debian bookworm main":                    "deb.debian.org_debian_dists_bookworm_InRelease",
		"deb http://deb.debian.org/debian-security/ bookworm-security main": "deb.debian.org_debian-security_dists_bookworm-security_InRelease",
	} {
		if got, ok := inReleaseFile(line); !ok || got != want {
			t.Errorf("inReleaseFile(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
	if _, ok := inReleaseFile("deb-src http://x bookworm main"); ok {
		t.Error("a deb-src line named an index")
	}
}

// TestBaseKeyCoversItsInputs: a change to any input of the base, the
// host's apt state included, makes another key; the same inputs the same.
func TestBaseKeyCoversItsInputs(t *testing.T) {
	key := baseKey(debian, "apt")
	if baseKey(debian, "apt") != key {
		t.Fatal("the same inputs hashed differently")
	}
	change := map[string]func(d *Debian){
		"suite":    func(d *Debian) { d.Suite = "trixie" },
		"sources":  func(d *Debian) { d.Sources = d.Sources[:1] },
		"packages": func(d *Debian) { d.Packages = append(slices.Clone(d.Packages), "python3") },
		"dpkgopts": func(d *Debian) { d.DpkgOpts = nil },
	}
	for name, f := range change {
		d := debian
		f(&d)
		if baseKey(d, "apt") == key {
			t.Errorf("changing %s kept the key", name)
		}
	}
	if baseKey(debian, "apt updated") == key {
		t.Error("new apt state kept the key")
	}
}

func TestImageKeyCoversItsInputs(t *testing.T) {
	in := imageInputs{base: "b", dockerfile: "d", gitconfig: "g", buildArgs: []string{"UID=1"},
		sandboxd: []byte{1}, staticcheck: []byte{2}, gopls: []byte{4}, goToolchain: "go1.26", goroot: "/x"}
	key := in.key()
	changes := map[string]func(*imageInputs){
		"base":        func(i *imageInputs) { i.base = "b2" },
		"Dockerfile":  func(i *imageInputs) { i.dockerfile = "d2" },
		"gitconfig":   func(i *imageInputs) { i.gitconfig = "g2" },
		"build args":  func(i *imageInputs) { i.buildArgs = []string{"UID=2"} },
		"sandboxd":    func(i *imageInputs) { i.sandboxd = []byte{3} },
		"staticcheck": func(i *imageInputs) { i.staticcheck = []byte{3} },
		"gopls":       func(i *imageInputs) { i.gopls = []byte{5} },
		"go":          func(i *imageInputs) { i.goToolchain = "go1.27" },
	}
	for name, f := range changes {
		c := in
		f(&c)
		if c.key() == key {
			t.Errorf("changing %s kept the key", name)
		}
	}
	// Where the files are does not matter, only what they hold.
	c := in
	c.goroot, c.sandboxdBin = "/elsewhere", "/tmp/sandboxd"
	if c.key() != key {
		t.Error("moving the inputs changed the key")
	}
	// Fields are length-prefixed: moving bytes between them is a change.
	c = in
	c.base, c.dockerfile = "bd", ""
	if c.key() == key {
		t.Error("moving bytes between fields kept the key")
	}
}

func TestAptStateFollowsTheHostsLists(t *testing.T) {
	dir := t.TempDir()
	old := aptListsDir
	aptListsDir = dir
	t.Cleanup(func() { aptListsDir = old })

	absent := aptState(debian)
	name, _ := inReleaseFile(debian.Sources[0])
	write := func(content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Date: Sat, 10 May 2025\n")
	first := aptState(debian)
	if first == absent {
		t.Error("an InRelease file appearing kept the state")
	}
	write("Date: Sat, 12 Jul 2025\n")
	if aptState(debian) == first {
		t.Error("a new InRelease kept the state")
	}
}

func TestCopyGorootLeavesOutTests(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "go")
	for _, f := range []string{"bin/go", "src/fmt/print.go", "src/fmt/testdata/x", "test/a.go", "api/go1.txt", "src/cmd/api/main.go"} {
		p := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("print.go", filepath.Join(src, "src/fmt/link.go")); err != nil {
		t.Fatal(err)
	}
	if err := copyGoroot(src, dst); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{"bin/go": true, "src/fmt/print.go": true, "src/fmt/link.go": true,
		"src/cmd/api/main.go": true, "src/fmt/testdata": false, "test": false, "api": false} {
		_, err := os.Lstat(filepath.Join(dst, f))
		if got := err == nil; got != want {
			t.Errorf("%s copied: %v, want %v", f, got, want)
		}
	}
}

// TestMakefileAgrees: make sandboxd-image and make lint use the version
// and the staticcheck this package and codegenimage assume, or the tests
// would build an image of their own instead of sharing make's.
func TestMakefileAgrees(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"VERSION": codegenimage.Version, "STATICCHECK_VERSION": StaticcheckVersion, "GOPLS_VERSION": GoplsVersion} {
		m := regexp.MustCompile(`(?m)^` + name + `\s*\??:?=\s*(\S+)`).FindSubmatch(mk)
		if m == nil || string(m[1]) != want {
			t.Errorf("the Makefile's %s is %q, want %q", name, m, want)
		}
	}
}
