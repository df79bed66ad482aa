// Package escapetest is the fixture every path-containment test starts
// from: a workspace directory beside a directory holding a secret, with
// symlinks of every kind inside it, the paths that try to leave it and
// the paths that legitimately stay in.
//
//	outside/secret           the file every escape tries to reach
//	ws/                      the workspace
//	  file.txt, dir/nested.txt
//	  in-link -> file.txt, dir-link -> dir, chain1 -> chain2 -> file.txt
//	  out-abs -> outside/secret (absolute), out-rel -> ../outside/secret
//	  out-dir -> ../outside, chain-out1 -> chain-out2 -> ../outside/secret
//	  abs-in -> ws/file.txt (absolute, pointing inside: legit)
//	  proc-root -> /proc/self/root, proc-cwd -> /proc/self/cwd
//	  dir/up -> .., dir/upup -> ../..
package escapetest

import (
	"os"
	"path/filepath"
	"testing"
)

// Secret is the outside file's content: finding it in any result means a
// path got out.
const Secret = "SECRET"

// Fixture is the layout above, in a fresh temporary directory.
type Fixture struct {
	Base   string // holds ws/ and outside/
	Dir    string // the workspace
	Secret string // the outside file
}

// New lays the fixture out; the test's TempDir removes it.
func New(t testing.TB) *Fixture {
	t.Helper()
	base := t.TempDir()
	f := &Fixture{Base: base, Dir: filepath.Join(base, "ws"), Secret: filepath.Join(base, "outside", "secret")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(f.Dir, "dir"), 0o755)) // #nosec G301 -- the fixture workspace: the agent's user (another UID) must reach it
	must(os.MkdirAll(filepath.Dir(f.Secret), 0o755))      // #nosec G301 -- open on purpose: the escape tests prove the sandbox, not the mode, keeps the secret out
	must(os.WriteFile(f.Secret, []byte(Secret), 0o600))
	must(os.WriteFile(filepath.Join(f.Dir, "file.txt"), []byte("inside"), 0o644)) // #nosec G306 -- a fixture file the agent's user (another UID) must read
	// #nosec G306 -- a fixture file the agent's user (another UID) must read
	must(os.WriteFile(filepath.Join(f.Dir, "dir", "nested.txt"), []byte("nested"), 0o644))
	for link, to := range map[string]string{
		"in-link":    "file.txt",
		"dir-link":   "dir",
		"chain1":     "chain2",
		"chain2":     "file.txt",
		"out-abs":    f.Secret,
		"out-rel":    "../outside/secret",
		"out-dir":    "../outside",
		"chain-out1": "chain-out2",
		"chain-out2": "../outside/secret",
		"abs-in":     filepath.Join(f.Dir, "file.txt"),
		"proc-root":  "/proc/self/root",
		"proc-cwd":   "/proc/self/cwd",
		"dir/up":     "..",
		"dir/upup":   "../..",
	} {
		must(os.Symlink(to, filepath.Join(f.Dir, link)))
	}
	return f
}

// Legit maps paths that stay inside, through in-root symlinks too, to
// the content they reach.
func (f *Fixture) Legit() map[string]string {
	return map[string]string{
		"file.txt":                       "inside",
		"./file.txt":                     "inside",
		"dir/../file.txt":                "inside",
		"dir/nested.txt":                 "nested",
		"in-link":                        "inside",
		"dir-link/nested.txt":            "nested",
		"chain1":                         "inside",
		"dir/up/file.txt":                "inside",
		filepath.Join(f.Dir, "file.txt"): "inside",
		filepath.Join(f.Dir, "dir", "nested.txt"): "nested",
		filepath.Join(f.Dir, "in-link"):           "inside",
		f.Dir + "/dir/../file.txt":                "inside",
		filepath.Join(f.Dir, "dir/../in-link"):    "inside",
		"abs-in":                                  "inside",
	}
}

// Escapes are paths that must never reach outside the workspace: ".." in
// every position, absolute paths elsewhere, symlinks out (direct, chained,
// absolute, through a directory), and /proc.
func (f *Fixture) Escapes() []string {
	return []string{
		"../outside/secret",
		"dir/../../outside/secret",
		"./../outside/secret",
		"dir/../../../../../../etc/passwd",
		"..",
		"../",
		"dir/../..",
		"../ws/../outside/secret",
		"./dir/./../../outside/secret",
		f.Secret,
		"/etc/passwd",
		"/",
		f.Base,
		f.Dir + "/../outside/secret",
		f.Dir + "/dir/../../outside/secret",
		f.Dir + "-sibling/file",
		"/proc/self/root" + f.Secret,
		"/proc/self/cwd/file.txt",
		"/proc/self/root/etc/passwd",
		"/proc/1/root/etc/passwd",
		"out-abs",
		"out-rel",
		"out-dir/secret",
		"chain-out1",
		"proc-root/etc/passwd",
		"proc-root" + f.Secret,
		"proc-cwd/file.txt",
		"dir/upup/outside/secret",
		"dir-link/upup/outside/secret",
		"dir/../out-rel",
		filepath.Join(f.Dir, "out-dir", "secret"),
		"dir-link/../out-dir/secret",
	}
}
