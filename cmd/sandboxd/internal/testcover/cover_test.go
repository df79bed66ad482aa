package testcover

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

func TestParseProfile(t *testing.T) {
	data := []byte("mode: set\n" +
		"example.com/calc/calc.go:6.24,8.2 1 1\n" +
		"example.com/calc/calc.go:19.20,21.2 1 0\n" +
		"example.com/calc/other file.go:3.1,4.2 2 1\n")
	got, err := parseProfile(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Block{{6, 24, 8, 2}}; !slices.Equal(got["calc.go"], want) {
		t.Errorf("calc.go = %v, want %v (the block that did not run left out)", got["calc.go"], want)
	}
	if want := []Block{{3, 1, 4, 2}}; !slices.Equal(got["other file.go"], want) {
		t.Errorf("other file.go = %v, want %v", got["other file.go"], want)
	}
	for _, bad := range []string{"", "x.go:1.1,2.2 1 1\n", "mode: set\nx.go 1 1\n", "mode: set\nx.go:1.1 1 1\n", "mode: set\nx.go:a.1,2.2 1 1\n", "mode: set\nx.go:1.1,2.2 1 x\n"} {
		if _, err := parseProfile([]byte(bad)); bad != "" && err == nil {
			t.Errorf("parseProfile(%q) took it", bad)
		}
	}
}

// goEnv is the environment the go command needs, without the network.
func goEnv(t testing.TB) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	env := strings.Split(strings.TrimSpace(string(out)), "\n")
	return []string{
		"PATH=" + filepath.Join(env[2], "bin") + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C",
		"GOCACHE=" + env[0], "GOMODCACHE=" + env[1], "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off",
	}
}

func fixture(t testing.TB) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/calc")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// TestFileCoverage: each line is covered by exactly the tests that ran
// it, a second ask comes from the cache, and a change to the package
// computes it again.
func TestFileCoverage(t *testing.T) {
	ws := fixture(t)
	c := New(ws, Options{Env: goEnv(t)})
	ctx := context.Background()
	fc, err := c.File(ctx, "calc.go", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if fc.Cached || !slices.Equal(fc.Tests, []string{"TestAdd", "TestAbs", "TestAbsPositive"}) || len(fc.Failed) != 0 {
		t.Fatalf("first ask: cached %v, tests %v, failed %v", fc.Cached, fc.Tests, fc.Failed)
	}
	for line, want := range map[int][]string{
		7:  {"TestAdd"},
		12: {"TestAbs", "TestAbsPositive"},
		13: {"TestAbs"},
		15: {"TestAbsPositive"},
		20: nil,
		2:  nil,
	} {
		if got := fc.Covering(line); !slices.Equal(got, want) {
			t.Errorf("line %d covered by %v, want %v", line, got, want)
		}
	}

	fc, err = c.File(ctx, "calc.go", time.Minute)
	if err != nil || !fc.Cached {
		t.Fatalf("second ask: %v, cached %v", err, fc != nil && fc.Cached)
	}

	// TestAdd now fails, and runs Unused: recomputed, and still counted.
	test, _ := os.ReadFile(filepath.Join(ws.Dir(), "calc_test.go"))
	test = []byte(strings.Replace(string(test), `if Add(1, 2) != 3 {`, `if Add(1, 2) != Unused() {`, 1))
	if err := os.WriteFile(filepath.Join(ws.Dir(), "calc_test.go"), test, 0o644); err != nil {
		t.Fatal(err)
	}
	fc, err = c.File(ctx, "calc.go", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if fc.Cached || !slices.Equal(fc.Failed, []string{"TestAdd"}) || !slices.Equal(fc.Covering(20), []string{"TestAdd"}) {
		t.Errorf("after the change: cached %v, failed %v, line 20 covered by %v", fc.Cached, fc.Failed, fc.Covering(20))
	}
}

func TestFileRefusals(t *testing.T) {
	ws := fixture(t)
	c := New(ws, Options{Env: goEnv(t)})
	ctx := context.Background()
	if _, err := c.File(ctx, "calc_test.go", time.Minute); !errors.Is(err, ErrTestFile) {
		t.Errorf("test file: %v", err)
	}
	if _, err := c.File(ctx, "go.mod", time.Minute); err == nil || !strings.Contains(err.Error(), "not a Go file") {
		t.Errorf("go.mod: %v", err)
	}
	if _, err := c.File(ctx, "../x.go", time.Minute); !workspace.IsOutside(err) {
		t.Errorf("outside: %v", err)
	}
	if _, err := c.File(ctx, "missing.go", time.Minute); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if err := os.WriteFile(filepath.Join(ws.Dir(), "broken.go"), []byte("package calc\n\nfunc Broken() int { return \"x\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.File(ctx, "calc.go", time.Minute); err == nil || !strings.Contains(err.Error(), "build the tests of .: process exited with code 1") || !strings.Contains(err.Error(), "broken.go:3:") {
		t.Errorf("build failure: %v", err)
	}
}

// TestMaxTests: past the limit tests are counted, not run.
func TestMaxTests(t *testing.T) {
	c := New(fixture(t), Options{Env: goEnv(t), MaxTests: 1})
	fc, err := c.File(context.Background(), "calc.go", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fc.Tests, []string{"TestAdd"}) || fc.Skipped != 2 || !slices.Equal(fc.Covering(7), []string{"TestAdd"}) || fc.Covering(13) != nil {
		t.Errorf("tests %v, skipped %d, line 7 %v, line 13 %v", fc.Tests, fc.Skipped, fc.Covering(7), fc.Covering(13))
	}
}

// TestTimeoutIsNotCached: a call whose time runs out fails or is
// marked incomplete, and leaves nothing in the cache.
func TestTimeoutIsNotCached(t *testing.T) {
	c := New(fixture(t), Options{Env: goEnv(t)})
	fc, err := c.File(context.Background(), "calc.go", time.Millisecond)
	if err == nil && !fc.Incomplete {
		t.Fatalf("1ms was enough: %+v", fc)
	}
	if e := c.pkgs["."]; e != nil && e.pkg != nil {
		t.Errorf("cached after a timeout: %+v", e.pkg)
	}
}
