package dockerbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

// requireDocker skips when there is no docker engine, unless CI is set,
// where a missing engine fails the test.
func requireDocker(t *testing.T) {
	t.Helper()
	dockertest.Require(t)
}

// busyboxImage returns a locally built image: FROM scratch with a static
// busybox and its applets in /bin.
func busyboxImage(t *testing.T) string {
	t.Helper()
	return dockertest.Image(t, dockertest.Busybox)
}

// uniqueName is a sandbox name (and so a label value) no other test uses.
func uniqueName(t testing.TB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	n := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	return "t-" + n + "-" + hex.EncodeToString(b[:])
}

// buildPlugin builds the docker plugin, version 1.2.3, into a directory
// of its own for a plugin host to find, and returns the directory.
func buildPlugin(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "promptkit-sandbox-docker_v1.2.3")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.version=1.2.3", "../../cmd/promptkit-sandbox-docker")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build plugin: %v\n%s", err, out)
	}
	return dir
}

func docker(t testing.TB, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("docker", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// containersNamed lists every container (running or not) labelled with
// the sandbox name.
func containersNamed(t *testing.T, name string) []string {
	t.Helper()
	out := docker(t, "ps", "-aq", "--filter", "label="+LabelName+"="+name)
	if out == "" {
		return nil
	}
	return strings.Fields(out)
}

// cleanupNamed removes, at the end of the test, whatever a sandbox name
// left behind (a failing test must not leak containers).
func cleanupNamed(t *testing.T, name string) {
	dockertest.Cleanup(t, LabelName+"="+name)
}

// assertNoContainers checks that no container labelled name exists.
func assertNoContainers(t *testing.T, name string) {
	t.Helper()
	if ids := containersNamed(t, name); len(ids) > 0 {
		t.Errorf("containers left behind for %s: %v", name, ids)
	}
}

// settle waits until the containers of the sandbox's ended calls are
// removed (that happens off the call's path).
func settle(sb *RunSandbox) { sb.reaper.Wait() }

// assertNoContainersSoon is assertNoContainers for a sandbox in another
// process: its ended calls' containers go within seconds.
func assertNoContainersSoon(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for len(containersNamed(t, name)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	assertNoContainers(t, name)
}

// startContainer runs a long-lived busybox container for docker_exec
// tests (with an init that reaps orphans) and removes it at the end.
func startContainer(t *testing.T) string {
	t.Helper()
	img := busyboxImage(t)
	return docker(t, "run", "-d", "--init", "--network", "none", "--label", dockertest.UniqueLabel(t),
		img, "sleep", "3600")
}

// psIn lists the processes in a container (busybox ps: PID USER TIME COMMAND).
func psIn(t *testing.T, id string) string {
	t.Helper()
	return docker(t, "exec", id, "ps", "-o", "pid,stat,args")
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
