package sandboxdimage

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
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

// keyed is a layer's inputs: what they hash to.
type keyed interface{ key() string }

// assertKeyCovers: every change makes another key.
func assertKeyCovers[T keyed](t *testing.T, in T, changes map[string]func(*T)) {
	t.Helper()
	key := in.key()
	for name, f := range changes {
		c := in
		f(&c)
		if c.key() == key {
			t.Errorf("%T: changing %s kept the key", in, name)
		}
	}
}

func TestLayerKeysCoverTheirInputs(t *testing.T) {
	goIn := goLayerInputs{parent: "p", dockerfile: "d", staticcheck: []byte{2}, gopls: []byte{4}, goToolchain: "go1.26", goroot: "/x"}
	assertKeyCovers(t, goIn, map[string]func(*goLayerInputs){
		"parent":      func(i *goLayerInputs) { i.parent = "p2" },
		"Dockerfile":  func(i *goLayerInputs) { i.dockerfile = "d2" },
		"staticcheck": func(i *goLayerInputs) { i.staticcheck = []byte{3} },
		"gopls":       func(i *goLayerInputs) { i.gopls = []byte{5} },
		"go":          func(i *goLayerInputs) { i.goToolchain = "go1.27" },
		// Fields are length-prefixed: moving bytes between them is a change.
		"bytes between fields": func(i *goLayerInputs) { i.parent, i.dockerfile = "pd", "" },
	})
	debIn := debLayerInputs{parent: "p", language: "python", packages: []string{"python3"}, script: "s"}
	assertKeyCovers(t, debIn, map[string]func(*debLayerInputs){
		"parent":   func(i *debLayerInputs) { i.parent = "p2" },
		"language": func(i *debLayerInputs) { i.language = "node" },
		"packages": func(i *debLayerInputs) { i.packages = []string{"python3", "flake8"} },
		"script":   func(i *debLayerInputs) { i.script = "s2" },
	})
	top := topInputs{parent: "p", languages: []string{"go"}, dockerfile: "d", gitconfig: "g", buildArgs: []string{"UID=1"}, sandboxd: []byte{1}, helper: []byte{2}}
	assertKeyCovers(t, top, map[string]func(*topInputs){
		"parent":     func(i *topInputs) { i.parent = "p2" },
		"languages":  func(i *topInputs) { i.languages = []string{"go", "python"} },
		"Dockerfile": func(i *topInputs) { i.dockerfile = "d2" },
		"gitconfig":  func(i *topInputs) { i.gitconfig = "g2" },
		"build args": func(i *topInputs) { i.buildArgs = []string{"UID=2"} },
		"sandboxd":   func(i *topInputs) { i.sandboxd = []byte{3} },
		"helper":     func(i *topInputs) { i.helper = []byte{4} },
	})
	// Where the files are does not matter, only what they hold.
	moved := goIn
	moved.goroot, moved.goplsBin = "/elsewhere", "/tmp/gopls"
	if moved.key() != goIn.key() {
		t.Error("moving the Go layer's inputs changed its key")
	}
	movedTop := top
	movedTop.sandboxdBin, movedTop.helperBin = "/tmp/sandboxd", "/tmp/sandboxd-diagram"
	if movedTop.key() != top.key() {
		t.Error("moving sandboxd changed the key")
	}
}

func TestEveryLanguageHasALayer(t *testing.T) {
	for _, l := range codegenimage.Languages {
		if l != codegenimage.Go && len(languagePackages[l]) == 0 {
			t.Errorf("language %s has no packages", l)
		}
	}
}

func TestAptConfigNamesEveryHostPath(t *testing.T) {
	conf := aptConfig("/w", "/c", "amd64")
	for _, want := range []string{`Dir::Etc::Parts "/w/empty";`, `Dir::Etc::SourceList "/w/sources.list";`, `Dir::State::status "/w/status";`,
		`Dir::State::Lists "/c/lists";`, `APT::Architectures { "amd64"; };`, `APT::Install-Recommends "false";`} {
		if !strings.Contains(conf, want) {
			t.Errorf("apt.conf lacks %s:\n%s", want, conf)
		}
	}
	if got := sourcesList(debian); !strings.HasPrefix(got, "deb [signed-by="+debianKeyring+"] http://deb.debian.org/debian bookworm main\n") {
		t.Errorf("sources.list: %q", got)
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
