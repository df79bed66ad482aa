package dockertest

import (
	"strings"
	"testing"
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
