package codegenimage

import (
	"slices"
	"strings"
	"testing"
)

func TestDefaultRunArgs(t *testing.T) {
	got := DefaultRun("/src/app", "/run/user/1000/sb1").Args()
	want := []string{
		"--read-only",
		"--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=1g",
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--pids-limit", "1024",
		"--network", "none",
		"--user", "65532:65532",
		"-v", "/src/app:/workspace",
		"-v", "/run/user/1000/sb1:/run/sandboxd",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Args:\n got %q\nwant %q", got, want)
	}
}

func TestRunArgsWithoutRunDir(t *testing.T) {
	r := DefaultRun("/w", "")
	r.User = "1000:1000"
	args := r.Args()
	if strings.Contains(strings.Join(args, " "), RunDir) {
		t.Errorf("no run dir, but %q mounts one", args)
	}
	if i := slices.Index(args, "--user"); i < 0 || args[i+1] != "1000:1000" {
		t.Errorf("user not overridden: %q", args)
	}
}

func TestImageAndServeArgs(t *testing.T) {
	if got := Image(""); got != "promptkit/sandboxd:0.1.0" {
		t.Errorf("Image(\"\") = %q", got)
	}
	if got := Image("1.2.3"); got != "promptkit/sandboxd:1.2.3" {
		t.Errorf("Image(1.2.3) = %q", got)
	}
	want := "--addr unix:/run/sandboxd/mcp.sock --token-file /run/sandboxd/token --workspace /workspace"
	if got := strings.Join(ServeArgs(), " "); got != want {
		t.Errorf("ServeArgs = %q, want %q", got, want)
	}
}
