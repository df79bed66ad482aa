package kubecluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestWriteShimTreesShowsOnlyOurShims starts two stand-ins for shims, one
// naming this cluster's containerd socket and one another's, each with a
// child; only the first and its child are written, the child indented
// below it with its state.
func TestWriteShimTreesShowsOnlyOurShims(t *testing.T) {
	c := &Cluster{l: layout(t.TempDir())}
	ours := fakeShim(t, c.l.containerdSocket(), "sleep 60 & wait")
	theirs := fakeShim(t, "/run/containerd/containerd.sock", "sleep 60 & wait")

	var out bytes.Buffer
	for range 100 { // until the shell has started its sleep
		out.Reset()
		c.WriteShimTrees(&out, 80)
		if strings.Count(out.String(), "\n") == 3 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := regexp.MustCompile(fmt.Sprintf(`(?m)\A.*1 runtime shims:\n  %d [RS] containerd-shim-runc-v2 -c sleep 60 & wait -address \S+\n    \d+ [RS] sleep 60\n\z`, ours.Process.Pid))
	if !want.MatchString(out.String()) {
		t.Errorf("got:\n%s\nwant it to match %s", out.String(), want)
	}
	if strings.Contains(out.String(), fmt.Sprint(theirs.Process.Pid)) {
		t.Errorf("another containerd's shim %d is listed:\n%s", theirs.Process.Pid, out.String())
	}
}

func TestWriteShimTreesClipsAtMax(t *testing.T) {
	c := &Cluster{l: layout(t.TempDir())}
	fakeShim(t, c.l.containerdSocket(), "sleep 60 & sleep 60 & sleep 60 & wait")
	var out bytes.Buffer
	for range 100 {
		out.Reset()
		c.WriteShimTrees(&out, 2)
		if strings.Count(out.String(), "\n") == 4 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); len(lines) != 4 || lines[3] != "  …" {
		t.Errorf("with max 2, got:\n%s\nwant the header, two processes and an ellipsis", out.String())
	}
}

// fakeShim starts a copy of /bin/sh named as a runtime shim, with a
// shim's -address naming the containerd at socket, running script; it
// is killed, with its children, when the test ends.
func fakeShim(t *testing.T, socket, script string) *exec.Cmd {
	t.Helper()
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "containerd-shim-runc-v2")
	if err := os.WriteFile(exe, sh, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: exe, Args: []string{"containerd-shim-runc-v2", "-c", script, "-address", socket}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command("pkill", "-KILL", "-P", fmt.Sprint(cmd.Process.Pid)).Run()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}
