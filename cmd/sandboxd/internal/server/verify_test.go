package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunTypecheckOverMCP: run_typecheck finds a type error through the
// whole stack (official SDK client, HTTP, mcp-go, the verifier, the real
// go toolchain), with the position relative to the workspace, and the
// result is scrubbed like any other.
func TestRunTypecheckOverMCP(t *testing.T) {
	t.Parallel()
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/app\n\ngo 1.22\n")
	write("pkg/p.go", "package pkg\n\n// Secret is the value the scrubber must hide.\nconst Secret = 1\n\nvar s3cr3tvalue string = Secret\n")
	const secret = "s3cr3tvalue"
	d := startDaemon(t, Config{
		Workspaces: []Workspace{{Dir: dir}},
		Secrets:    map[string]string{"APP_SECRET": secret},
		Env: []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C",
			"GOCACHE=" + strings.TrimSpace(string(gocache)), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off",
			"APP_SECRET=" + secret,
		},
	})
	cs := d.connect(t, streamable)

	got := ok(t, cs, "run_typecheck", map[string]any{"timeout": 120000})
	want := "pkg/p.go:6:26: compile: cannot use Secret (untyped int constant 1) as string value in variable declaration"
	if !strings.HasPrefix(got, want+"\n1 finding; ") || !strings.Contains(got, "failed to build: example.com/app/pkg") {
		t.Errorf("run_typecheck =\n%s\nwant it to start with\n%s", got, want)
	}
	if got := ok(t, cs, "run_typecheck", map[string]any{"path": "pkg"}); !strings.HasPrefix(got, want) {
		t.Errorf("run_typecheck(path=pkg) =\n%s", got)
	}

	write("pkg/p.go", "package pkg\n\n// Bad holds the secret in a name the compiler will quote.\nvar Bad int = s3cr3tvalue\n")
	got = ok(t, cs, "run_typecheck", nil)
	t.Logf("run_typecheck of a file naming the secret:\n%s", got)
	if strings.Contains(got, secret) || !strings.Contains(got, "undefined: ") {
		t.Errorf("not scrubbed, or no finding: %s", got)
	}

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"path": "/"}, "outside the workspace"},
		{map[string]any{"path": "pkg/p.go"}, "not a directory"},
		{map[string]any{"timeout": 1800001}, "want milliseconds from 0 to 1800000"},
	} {
		if got := fails(t, cs, "run_typecheck", tc.args); !strings.Contains(got, tc.want) {
			t.Errorf("run_typecheck(%v) = %q, want %q in it", tc.args, got, tc.want)
		}
	}
	if got := fails(t, cs, "run_tests", map[string]any{"packages": "./... -exec=/bin/sh"}); !strings.Contains(got, "starts with '-'") {
		t.Errorf("flag as a package: %q", got)
	}
}
