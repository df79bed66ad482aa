package server

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// lspEnv is the environment for sandboxd's language servers in a test:
// the shared Go caches (a cold one would build the world) and gopls's
// (without it each test's gopls would analyse the standard library
// afresh), a HOME of its own, nothing fetched. It skips when the server is not installed and CI
// is unset; make test installs both.
func lspEnv(t testing.TB, server, install string) []string {
	t.Helper()
	if testing.Short() {
		// A language server costs seconds of CPU to start and index;
		// make unit's budget is a minute for everything.
		t.Skipf("skipping in -short mode: starts %s (make test runs it)", server)
	}
	gopath := goEnv(t, "GOPATH")
	path := os.Getenv("PATH") + string(filepath.ListSeparator) + filepath.Join(gopath, "bin")
	if _, err := lookIn(server, path); err != nil {
		ci.Skipf(t, "%s is not installed (%s; make test installs it): %v", server, install, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("the user's cache directory, for gopls: %v", err)
	}
	return []string{
		"PATH=" + path, "HOME=" + t.TempDir(), "LANG=C.UTF-8", "GOPLSCACHE=" + cache,
		"GOPATH=" + gopath, "GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"),
		"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off", "GOTELEMETRY=off",
	}
}

func goEnv(t testing.TB, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

func lookIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode()&0o111 != 0 {
			return filepath.Join(dir, name), nil
		}
	}
	return "", exec.ErrNotFound
}

// fixtureCopy copies testdata/lsp/NAME into a fresh directory.
func fixtureCopy(t testing.TB, name string) string {
	t.Helper()
	src, dst := filepath.Join("testdata", "lsp", name), t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

const (
	goplsInstall = "go install golang.org/x/tools/gopls@v0.23.0"
	pylspInstall = "apt-get install -y python3-pylsp"
)

// TestGoDefinitionAndReferencesFollowEdits: gopls answers through MCP,
// and keeps answering right after an Edit moved the symbol and after a
// shell moved it again: no answer comes from a stale copy.
func TestGoDefinitionAndReferencesFollowEdits(t *testing.T) {
	t.Parallel()
	dir := fixtureCopy(t, "gomod")
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, Env: lspEnv(t, "gopls", goplsInstall)})
	cs := d.connect(t, streamable)

	want := "Definition of Hello (from main.go:11:31):\ngreet/greet.go:8:6: func Hello(name string) string {\nNote: took the first of 2 occurrences (lines 11, 12); pass line to pick another"
	if got := ok(t, cs, "find_definition", map[string]any{"symbol": "Hello", "file_path": "main.go"}); got != want {
		t.Errorf("find_definition =\n%s\nwant\n%s", got, want)
	}
	refs := ok(t, cs, "find_references", map[string]any{"symbol": "Hello", "file_path": "greet/greet.go"})
	want = "4 references to Hello (from greet/greet.go:8:6):\n" +
		"greet/greet.go:8:6: func Hello(name string) string {\n" +
		"main.go:11:31: fmt.Println(\"héllo 😀\", greet.Hello(\"world\"))\n" +
		"main.go:12:21: report.Print(greet.Hello(\"gopher\"))\n" +
		"report/report.go:13:12: _ = greet.Hello"
	if refs != want {
		t.Errorf("find_references =\n%s\nwant\n%s", refs, want)
	}

	// An Edit moves Hello three lines down.
	ok(t, cs, "Read", map[string]any{"file_path": "greet/greet.go"})
	ok(t, cs, "Edit", map[string]any{"file_path": "greet/greet.go", "old_string": "// Hello greets", "new_string": "// Hi is short.\nconst Hi = \"hi\"\n\n// Hello greets"})
	want = "Definition of Hello (from main.go:11:31):\ngreet/greet.go:11:6: func Hello(name string) string {\nNote: took the first of 2 occurrences (lines 11, 12); pass line to pick another"
	if got := ok(t, cs, "find_definition", map[string]any{"symbol": "Hello", "file_path": "main.go"}); got != want {
		t.Errorf("after Edit, find_definition =\n%s\nwant\n%s", got, want)
	}
	if got := ok(t, cs, "find_references", map[string]any{"symbol": "Hello", "file_path": "greet/greet.go"}); !strings.Contains(got, "\ngreet/greet.go:11:6: func Hello") || strings.Contains(got, "greet.go:8:") {
		t.Errorf("after Edit, find_references =\n%s", got)
	}

	// A shell moves main.go's call a line down, unseen by sandboxd.
	ok(t, cs, "Bash", map[string]any{"command": `sed -i 's|^func main() {$|func main() {\n\t_ = 0|' main.go`})
	want = "Definition of Hello (from main.go:12:31):\ngreet/greet.go:11:6: func Hello(name string) string {\nNote: took the first of 2 occurrences (lines 12, 13); pass line to pick another"
	if got := ok(t, cs, "find_definition", map[string]any{"symbol": "Hello", "file_path": "main.go"}); got != want {
		t.Errorf("after Bash, find_definition =\n%s\nwant\n%s", got, want)
	}
	if got := ok(t, cs, "find_references", map[string]any{"symbol": "Hello", "file_path": "greet/greet.go"}); !strings.Contains(got, "\nmain.go:13:21: report.Print") {
		t.Errorf("after Bash, find_references =\n%s", got)
	}
}

// TestGoRenameAcrossFiles: rename_symbol rewrites three files of a
// module, the module still builds, and the renamed files can be Edited
// at once.
func TestGoRenameAcrossFiles(t *testing.T) {
	t.Parallel()
	dir := fixtureCopy(t, "gomod")
	env := lspEnv(t, "gopls", goplsInstall)
	// A minute for the diagnostics this test waits for: go vet took past
	// the 5 s default on a loaded machine.
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, Env: env, DiagnosticsTimeout: time.Minute})
	cs := d.connect(t, streamable)

	got := ok(t, cs, "rename_symbol", map[string]any{"symbol": "Hello", "file_path": "report/report.go", "new_name": "Welcome"})
	t.Logf("rename_symbol:\n%s", got)
	want := "Renamed Hello to Welcome (from report/report.go:13:12): 5 edits in 3 files\n" +
		"greet/greet.go (2 edits)\nmain.go (2 edits)\nreport/report.go (1 edit)\n\nDiagnostics ("
	// The changed files are checked, as after Write and Edit.
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "no problems found") {
		t.Errorf("rename_symbol =\n%s\nwant it to start\n%s\nand end with no problems found", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "greet", "greet.go")); !strings.Contains(string(b), "// Welcome greets name.\nfunc Welcome(name string) string {") {
		t.Errorf("greet.go after the rename:\n%s", b)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "main.go"))
	if strings.Contains(string(b), "Hello(") || strings.Count(string(b), "greet.Welcome(") != 2 {
		t.Errorf("main.go after the rename:\n%s", b)
	}
	build := exec.Command("go", "build", "./...")
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build after the rename: %v\n%s", err, out)
	}
	// No Read needed: the rename recorded what it wrote.
	ok(t, cs, "Edit", map[string]any{"file_path": "greet/greet.go", "old_string": "return Greeting + name", "new_string": "return Greeting + name + \"!\""})

	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"symbol": "Nope", "file_path": "main.go", "new_name": "X"}, "Nope does not occur in this file"},
		{map[string]any{"symbol": "Welcome", "file_path": "main.go", "new_name": "X", "line": 3}, "does not occur on line 3; it does on lines 11, 12"},
		{map[string]any{"symbol": "Welcome", "file_path": "main.go", "new_name": "not valid"}, `new name "not valid" is not an identifier`},
		{map[string]any{"symbol": "Welcome", "file_path": "go.mod", "new_name": "X"}, "no language server for .mod files"},
		{map[string]any{"symbol": "Welcome", "file_path": "/etc/passwd", "new_name": "X"}, "outside the workspace"},
	} {
		if got := fails(t, cs, "rename_symbol", c.args); !strings.Contains(got, c.want) {
			t.Errorf("rename_symbol(%v) = %q, want %q in it", c.args, got, c.want)
		}
	}
}

// TestPythonDefinitionAndReferences: pylsp (code-point positions)
// through MCP, on a line with characters outside the BMP; the lines
// shown are scrubbed like any result.
func TestPythonDefinitionAndReferences(t *testing.T) {
	t.Parallel()
	dir := fixtureCopy(t, "py")
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, Env: lspEnv(t, "pylsp", pylspInstall), Secrets: map[string]string{"APP_SECRET": "there"}})
	cs := d.connect(t, streamable)

	want := "Definition of shout (from app.py:5:22):\nutil.py:4:5: def shout(text):"
	if got := ok(t, cs, "find_definition", map[string]any{"symbol": "shout", "file_path": "app.py", "line": 5}); got != want {
		t.Errorf("find_definition =\n%s\nwant\n%s", got, want)
	}
	want = "4 references to shout (from app.py:1:18):\n" +
		"app.py:1:18: from util import shout\n" +
		"app.py:5:22: print(\"héllo 😀\", shout(\"hi\"))\n" +
		"app.py:6:11: print(shout(\"[REDACTED:secret:APP_SECRET]\"))\n" +
		"util.py:4:5: def shout(text):\n" +
		"Note: took the first of 3 occurrences (lines 1, 5, 6); pass line to pick another"
	if got := ok(t, cs, "find_references", map[string]any{"symbol": "shout", "file_path": "app.py"}); got != want {
		t.Errorf("find_references =\n%s\nwant\n%s", got, want)
	}
	ok(t, cs, "Read", map[string]any{"file_path": "util.py"})
	ok(t, cs, "Edit", map[string]any{"file_path": "util.py", "old_string": "def shout", "new_string": "QUIET = False\n\n\ndef shout"})
	want = "Definition of shout (from app.py:6:11):\nutil.py:7:5: def shout(text):"
	if got := ok(t, cs, "find_definition", map[string]any{"symbol": "shout", "file_path": "app.py", "line": 6}); got != want {
		t.Errorf("after Edit, find_definition =\n%s\nwant\n%s", got, want)
	}

	got := ok(t, cs, "rename_symbol", map[string]any{"symbol": "shout", "file_path": "util.py", "new_name": "yell"})
	if !strings.HasPrefix(got, "Renamed shout to yell (from util.py:7:5): ") || !strings.Contains(got, " in 2 files\napp.py (") || !strings.Contains(got, "\nutil.py (") {
		t.Errorf("rename_symbol = %s", got)
	}
	app, _ := os.ReadFile(filepath.Join(dir, "app.py"))
	if want := "from util import yell\n\n\ndef main():\n    print(\"héllo 😀\", yell(\"hi\"))\n    print(yell(\"there\"))\n"; string(app) != want {
		t.Errorf("app.py after the rename:\n%s\nwant\n%s", app, want)
	}
}

// TestLanguageServerRestartsAndStops: a killed gopls is started again
// by the next call, asked at once, and Close leaves no gopls behind.
func TestLanguageServerRestartsAndStops(t *testing.T) {
	t.Parallel()
	dir := fixtureCopy(t, "gomod")
	d := startDaemon(t, Config{Workspaces: []Workspace{{Dir: dir}}, Env: lspEnv(t, "gopls", goplsInstall)})
	cs := d.connect(t, streamable)
	args := map[string]any{"symbol": "Hello", "file_path": "main.go"}
	ok(t, cs, "find_definition", args)
	mgr := d.srv.spaces[""].lsp
	pid := mgr.Running()["go"]
	if pid == 0 {
		t.Fatal("no gopls running after a question")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if got := ok(t, cs, "find_definition", args); !strings.Contains(got, "greet/greet.go:8:6: func Hello") {
		t.Errorf("after the kill, find_definition = %q", got)
	}
	again := mgr.Running()["go"]
	if again == 0 || again == pid {
		t.Fatalf("gopls pid %d after the restart (killed: %d)", again, pid)
	}
	if err := d.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if left := processesIn(dir); len(left) > 0 {
		t.Fatalf("processes left in the workspace after Close: %v", left)
	}
}

// processesIn lists the processes whose working directory is dir.
func processesIn(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}
