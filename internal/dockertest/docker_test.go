package dockertest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

func TestCleanupRemovesContainers(t *testing.T) {
	image := Image(t, Busybox)
	var label string
	t.Run("starts containers and ends", func(t *testing.T) {
		label = UniqueLabel(t)
		for range 2 {
			Docker(t, "run", "--detach", "--network", "none", "--label", label, image, "sleep", "300")
		}
		// A stopped container must go too.
		id := Docker(t, "create", "--network", "none", "--label", label, image, "true")
		if got := len(strings.Fields(Docker(t, "ps", "--all", "--quiet", "--filter", "label="+label))); got != 3 {
			t.Fatalf("%d containers labelled %s, want 3 (%s)", got, label, id)
		}
	})
	AssertNoContainers(t, label)
}

func TestAssertNoContainersReportsSurvivors(t *testing.T) {
	t.Parallel()
	image := Image(t, Busybox)
	label := UniqueLabel(t) // removes the survivor afterwards
	Docker(t, "run", "--detach", "--network", "none", "--label", label, image, "sleep", "300")
	rec := &recorder{TB: t}
	AssertNoContainers(rec, label)
	if len(rec.failed) != 1 {
		t.Errorf("AssertNoContainers with a running container recorded %q, want one failure", rec.failed)
	}
}

func TestDockerFailsTheTestOnError(t *testing.T) {
	Require(t)
	rec := &recorder{TB: t}
	Docker(rec, "image", "inspect", "promptkit-test/does-not-exist:0")
	if len(rec.failed) != 1 {
		t.Errorf("Docker with a failing command recorded %q, want one failure", rec.failed)
	}
}

func TestFloodPatterns(t *testing.T) {
	if got := string(FloodStdout(20)); got != "0123456789abcdef0123" {
		t.Errorf("FloodStdout(20) = %q", got)
	}
	if got := string(FloodStderr(18)); got != "FEDCBA9876543210FE" {
		t.Errorf("FloodStderr(18) = %q", got)
	}
}

// envCleanupChild makes the test binary, run by
// TestCleanupWithoutEngine, run TestCleanupBeforeSkipChild for real.
const envCleanupChild = "PROMPTKIT_DOCKERTEST_CLEANUP_CHILD"

// TestCleanupBeforeSkipChild is what a Docker test does under make unit:
// it registers its cleanup, then skips. It runs only as the child of
// TestCleanupWithoutEngine.
func TestCleanupBeforeSkipChild(t *testing.T) {
	if os.Getenv(envCleanupChild) == "" {
		t.Skip("run by TestCleanupWithoutEngine")
	}
	UniqueLabel(t)
	Cleanup(t, "org.promptkit.test.other=x")
	Require(t)
	t.Error("Require did not skip without an engine")
}

// TestRequireCLIChild needs the docker CLI and no engine. It runs only
// as the child of TestCleanupWithoutEngine.
func TestRequireCLIChild(t *testing.T) {
	if os.Getenv(envCleanupChild) == "" {
		t.Skip("run by TestCleanupWithoutEngine")
	}
	RequireCLI(t)
}

// TestCleanupWithoutEngine: a cleanup registered before the test skips
// for want of Docker passes, with DOCKER_HOST pointing at nothing and
// with no docker CLI on PATH, in -short mode (make unit) and not; and
// RequireCLI runs a test without an engine, and skips one without the CLI.
func TestCleanupWithoutEngine(t *testing.T) {
	t.Parallel()
	if ci.Running() {
		t.Skip("CI is set: Require fails there without an engine, by design")
	}
	noDocker := t.TempDir() // an empty PATH: no docker CLI
	for _, c := range []struct {
		name string
		env  []string
		args []string
		// RequireCLI's verdict: the CLI is there without an engine.
		cli string
	}{
		{"engine unreachable, short", []string{"DOCKER_HOST=unix:///nonexistent/docker.sock"}, []string{"-test.short"}, "PASS"},
		{"engine unreachable", []string{"DOCKER_HOST=unix:///nonexistent/docker.sock"}, nil, "PASS"},
		{"no docker CLI, short", []string{"PATH=" + noDocker}, []string{"-test.short"}, "SKIP"},
		{"no docker CLI", []string{"PATH=" + noDocker}, nil, "SKIP"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(dockerCLI); err != nil && c.cli == "PASS" {
				c.cli = "SKIP"
			}
			args := append([]string{"-test.run", "^(TestCleanupBeforeSkipChild|TestRequireCLIChild)$", "-test.v", "-test.count", "1"}, c.args...)
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(append(os.Environ(), envCleanupChild+"=1"), c.env...)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- SKIP: TestCleanupBeforeSkipChild") || !strings.Contains(string(out), "--- "+c.cli+": TestRequireCLIChild") {
				t.Errorf("child: %v (want TestRequireCLIChild to %s)\n%s", err, c.cli, out)
			}
		})
	}
}
