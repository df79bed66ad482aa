package discovery

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mkdir creates dir with exactly mode, whatever the umask.
func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

// writeFile creates a file with exactly mode, whatever the umask.
func writeFile(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho "+filepath.Base(path)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// summary renders candidates as "name version path: refused", with root
// written as $R so expectations stay readable.
func summary(cs []Candidate, root string) []string {
	out := []string{}
	for _, c := range cs {
		s := c.String()
		if c.Dir == "" || !strings.HasPrefix(c.Path, c.Dir+"/") {
			s += " [Dir " + c.Dir + " does not hold Path]"
		}
		if !c.Usable() {
			s += ": " + c.Refused
		}
		out = append(out, strings.ReplaceAll(s, root, "$R"))
	}
	return out
}

func checkSummary(t *testing.T, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("candidates:\ngot:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestScanDefaultSearchPath(t *testing.T) {
	root := t.TempDir()
	env := Env{
		PluginPath:  root + "/pp1:" + root + "/pp-missing",
		XDGDataHome: root + "/xdg",
		Home:        root + "/home",
		WorkDir:     root + "/work",
		ExeDir:      root + "/bin",
	}
	for _, d := range []string{"/pp1", "/work/.promptkit/plugins", "/xdg/promptkit/plugins", "/bin", "/bin/plugins"} {
		mkdir(t, root+d, 0o755)
	}
	for _, f := range []string{
		"/pp1/promptkit-sandbox-docker_v1.2.0",
		"/pp1/promptkit-sandbox-kubectl",
		"/work/.promptkit/plugins/promptkit-sandbox-docker_v1.2.0", // same as pp1's: shadowed
		"/work/.promptkit/plugins/promptkit-sandbox-docker_v1.3.0",
		"/xdg/promptkit/plugins/promptkit-sandbox-docker_v1.x",
		"/xdg/promptkit/plugins/promptkit-sandbox-docker_v1.1.0",
		"/xdg/promptkit/plugins/README.md",
		"/bin/promptkit-sandbox", // the host itself
		"/bin/promptkit-sandbox-kubectl_v2.0.0",
		"/bin/plugins/promptkit-sandbox-kubectl_v2.0.0", // same as bin's: shadowed
		"/bin/plugins/promptkit-sandbox-docker_v2.0.0-rc.1",
	} {
		writeFile(t, root+f, 0o755)
	}
	dirs := SearchDirs(nil, env)
	r, err := Scan(dirs)
	if err != nil {
		t.Fatal(err)
	}
	wantDirs := []string{
		root + "/pp1", root + "/pp-missing", root + "/work/.promptkit/plugins",
		root + "/xdg/promptkit/plugins", root + "/bin", root + "/bin/plugins",
	}
	if !reflect.DeepEqual(r.Dirs, wantDirs) {
		t.Errorf("Dirs = %q, want %q", r.Dirs, wantDirs)
	}
	checkSummary(t, summary(r.Candidates, root), []string{
		"docker 1.2.0 ($R/pp1/promptkit-sandbox-docker_v1.2.0)",
		"kubectl 0.0.0 ($R/pp1/promptkit-sandbox-kubectl)",
		"docker 1.3.0 ($R/work/.promptkit/plugins/promptkit-sandbox-docker_v1.3.0)",
		"docker 1.2.0 ($R/work/.promptkit/plugins/promptkit-sandbox-docker_v1.2.0): shadowed by $R/pp1/promptkit-sandbox-docker_v1.2.0",
		"docker 1.1.0 ($R/xdg/promptkit/plugins/promptkit-sandbox-docker_v1.1.0)",
		`docker ($R/xdg/promptkit/plugins/promptkit-sandbox-docker_v1.x): invalid version in file name: "_v1.x" is not a semantic version; want _vMAJOR.MINOR.PATCH[-PRERELEASE]`,
		"kubectl 2.0.0 ($R/bin/promptkit-sandbox-kubectl_v2.0.0)",
		"docker 2.0.0-rc.1 ($R/bin/plugins/promptkit-sandbox-docker_v2.0.0-rc.1)",
		"kubectl 2.0.0 ($R/bin/plugins/promptkit-sandbox-kubectl_v2.0.0): shadowed by $R/bin/promptkit-sandbox-kubectl_v2.0.0",
	})
	checkSummary(t, summary(r.Usable("docker"), root), []string{
		"docker 2.0.0-rc.1 ($R/bin/plugins/promptkit-sandbox-docker_v2.0.0-rc.1)",
		"docker 1.3.0 ($R/work/.promptkit/plugins/promptkit-sandbox-docker_v1.3.0)",
		"docker 1.2.0 ($R/pp1/promptkit-sandbox-docker_v1.2.0)",
		"docker 1.1.0 ($R/xdg/promptkit/plugins/promptkit-sandbox-docker_v1.1.0)",
	})
	checkSummary(t, summary(r.Usable("kubectl"), root), []string{
		"kubectl 2.0.0 ($R/bin/promptkit-sandbox-kubectl_v2.0.0)",
		"kubectl 0.0.0 ($R/pp1/promptkit-sandbox-kubectl)",
	})
	if got := r.Usable("nope"); len(got) != 0 {
		t.Errorf("Usable(nope) = %v", got)
	}
}

func TestScanExplicitDirsReplaceDefaults(t *testing.T) {
	root := t.TempDir()
	env := Env{PluginPath: root + "/pp", WorkDir: root, ExeDir: root + "/bin"}
	for _, d := range []string{"/pp", "/bin", "/mine"} {
		mkdir(t, root+d, 0o755)
	}
	writeFile(t, root+"/pp/promptkit-sandbox-docker_v9.0.0", 0o755)
	writeFile(t, root+"/bin/promptkit-sandbox-docker_v8.0.0", 0o755)
	writeFile(t, root+"/mine/promptkit-sandbox-docker_v1.0.0", 0o755)
	r, err := Scan(SearchDirs([]string{"mine"}, env))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{root + "/mine"}; !reflect.DeepEqual(r.Dirs, want) {
		t.Errorf("Dirs = %q, want %q", r.Dirs, want)
	}
	checkSummary(t, summary(r.Candidates, root), []string{"docker 1.0.0 ($R/mine/promptkit-sandbox-docker_v1.0.0)"})
}

func TestScanUnversionedIsDevBuild(t *testing.T) {
	root := t.TempDir()
	mkdir(t, root+"/p", 0o755)
	writeFile(t, root+"/p/promptkit-sandbox-docker", 0o755)
	writeFile(t, root+"/p/promptkit-sandbox-docker_v0.0.1", 0o755)
	r, err := Scan([]string{root + "/p"})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, summary(r.Candidates, root), []string{
		"docker 0.0.1 ($R/p/promptkit-sandbox-docker_v0.0.1)",
		"docker 0.0.0 ($R/p/promptkit-sandbox-docker)",
	})
	if v := r.Candidates[1].Version; !v.Equal(DevVersion()) {
		t.Errorf("unversioned file has version %s, want 0.0.0", v)
	}
}

func TestScanRefusals(t *testing.T) {
	root := t.TempDir()
	p := root + "/p"
	mkdir(t, p, 0o755)
	mkdir(t, root+"/targets", 0o755)
	mkdir(t, root+"/open", 0o777)
	writeFile(t, p+"/promptkit-sandbox-ok_v1.0.0", 0o700)
	writeFile(t, p+"/promptkit-sandbox-groupw", 0o775)
	writeFile(t, p+"/promptkit-sandbox-worldw", 0o757)
	writeFile(t, p+"/promptkit-sandbox-noexec", 0o644)
	writeFile(t, p+"/promptkit-sandbox-otherexec", 0o655) // executable, but not by its owner
	mkdir(t, p+"/promptkit-sandbox-adir", 0o755)
	writeFile(t, p+"/notes.txt", 0o666) // not a plugin: ignored even though unsafe

	writeFile(t, root+"/targets/good", 0o755)
	writeFile(t, root+"/targets/writable", 0o777)
	writeFile(t, root+"/open/tool", 0o755)
	symlink(t, root+"/targets/good", p+"/promptkit-sandbox-link_v1.0.0")
	symlink(t, "../targets/good", p+"/promptkit-sandbox-rellink") // relative target
	symlink(t, root+"/targets/writable", p+"/promptkit-sandbox-badlink")
	symlink(t, root+"/open/tool", p+"/promptkit-sandbox-opendirlink")
	symlink(t, root+"/targets/gone", p+"/promptkit-sandbox-broken")
	symlink(t, root+"/targets", p+"/promptkit-sandbox-dirlink")

	r, err := Scan([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, summary(r.Candidates, root), []string{
		"adir 0.0.0 ($R/p/promptkit-sandbox-adir): file is not a regular file (mode drwxr-xr-x)",
		"badlink 0.0.0 ($R/p/promptkit-sandbox-badlink): symlink target $R/targets/writable is writable by group or others (mode -rwxrwxrwx)",
		"broken 0.0.0 ($R/p/promptkit-sandbox-broken): broken symlink: lstat $R/targets/gone: no such file or directory",
		"dirlink 0.0.0 ($R/p/promptkit-sandbox-dirlink): symlink target $R/targets is not a regular file (mode drwxr-xr-x)",
		"groupw 0.0.0 ($R/p/promptkit-sandbox-groupw): file is writable by group or others (mode -rwxrwxr-x)",
		"link 1.0.0 ($R/p/promptkit-sandbox-link_v1.0.0)",
		"noexec 0.0.0 ($R/p/promptkit-sandbox-noexec): file is not executable by its owner (mode -rw-r--r--)",
		"ok 1.0.0 ($R/p/promptkit-sandbox-ok_v1.0.0)",
		"opendirlink 0.0.0 ($R/p/promptkit-sandbox-opendirlink): symlink target directory $R/open is writable by group or others (mode drwxrwxrwx)",
		"otherexec 0.0.0 ($R/p/promptkit-sandbox-otherexec): file is not executable by its owner (mode -rw-r-xr-x)",
		"rellink 0.0.0 ($R/p/promptkit-sandbox-rellink)",
		"worldw 0.0.0 ($R/p/promptkit-sandbox-worldw): file is writable by group or others (mode -rwxr-xrwx)",
	})
}

func TestScanWritableDirRefusesItsPlugins(t *testing.T) {
	for _, mode := range []os.FileMode{0o775, 0o757, 0o1777} {
		root := t.TempDir()
		mkdir(t, root+"/p", mode)
		writeFile(t, root+"/p/promptkit-sandbox-docker_v1.0.0", 0o755)
		r, err := Scan([]string{root + "/p"})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := os.Stat(root + "/p")
		checkSummary(t, summary(r.Candidates, root), []string{
			"docker 1.0.0 ($R/p/promptkit-sandbox-docker_v1.0.0): directory $R/p is writable by group or others (mode " + m.Mode().String() + ")",
		})
	}
}

func TestScanRefusedFileShadowsNothing(t *testing.T) {
	root := t.TempDir()
	mkdir(t, root+"/a", 0o755)
	mkdir(t, root+"/b", 0o755)
	writeFile(t, root+"/a/promptkit-sandbox-docker_v1.0.0", 0o777)
	writeFile(t, root+"/b/promptkit-sandbox-docker_v1.0.0", 0o755)
	r, err := Scan([]string{root + "/a", root + "/b"})
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, summary(r.Candidates, root), []string{
		"docker 1.0.0 ($R/a/promptkit-sandbox-docker_v1.0.0): file is writable by group or others (mode -rwxrwxrwx)",
		"docker 1.0.0 ($R/b/promptkit-sandbox-docker_v1.0.0)",
	})
}

func TestScanSkipsMissingAndNonDirectories(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root+"/afile", 0o755)
	dirs := []string{root + "/missing", root + "/afile", root + "/afile/below", root + "/missing/"}
	r, err := Scan(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{root + "/missing", root + "/afile", root + "/afile/below"}; !reflect.DeepEqual(r.Dirs, want) {
		t.Errorf("Dirs = %q, want %q", r.Dirs, want)
	}
	if r.Candidates == nil || len(r.Candidates) != 0 {
		t.Errorf("Candidates = %#v, want empty and non-nil", r.Candidates)
	}
}

func TestScanFailsOnUnreadableDirectory(t *testing.T) {
	root := t.TempDir()
	symlink(t, root+"/loop", root+"/loop") // stat fails with ELOOP, not "missing"
	_, err := Scan([]string{root + "/loop"})
	if want := "scan plugin directory: stat " + root + "/loop: too many levels of symbolic links"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
