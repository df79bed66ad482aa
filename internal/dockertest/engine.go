package dockertest

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// dockerCLI is the client every helper runs; tests that need another one
// can put it first on PATH.
const dockerCLI = "docker"

// probeTimeout bounds the engine check: an engine that takes longer than
// this to answer `docker version` is as good as absent for a test run.
const probeTimeout = 15 * time.Second

// howToFix tells a developer what to do about a missing engine or busybox.
const howToFix = "run scripts/ensure-docker.sh as root (it installs docker.io and busybox-static and starts an engine), or point DOCKER_HOST at an engine"

// probeResult is what Require learns about the machine; the zero value
// means a usable engine.
type probeResult struct {
	noCLI    error // the docker CLI is not on PATH
	noEngine error // the CLI is there but no engine answered
}

// problem says what is missing, or "" when the engine is usable.
func (p probeResult) problem() string {
	switch {
	case p.noCLI != nil:
		return fmt.Sprintf("the docker CLI is not installed (%v)", p.noCLI)
	case p.noEngine != nil:
		return fmt.Sprintf("no Docker engine answers (%v)", p.noEngine)
	}
	return ""
}

// probe asks the engine once per process: it does not come and go during a
// test run, and many tests ask.
var probe = sync.OnceValue(func() probeResult {
	if _, err := exec.LookPath(dockerCLI); err != nil {
		return probeResult{noCLI: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	if _, err := run(ctx, nil, "version", "--format", "{{.Server.Version}}"); err != nil {
		return probeResult{noEngine: err}
	}
	return probeResult{}
})

// busyboxProblem says why the test images cannot be built here, or "".
// Asked once per process, like probe.
var busyboxProblem = sync.OnceValue(func() string {
	if _, err := readBusybox(); err != nil {
		return err.Error()
	}
	return ""
})

// need skips the test for want of Docker, saying what is missing and
// how to get it, unless problem is "" (in CI it fails it: package ci).
func need(t testing.TB, problem string) {
	t.Helper()
	if problem != "" {
		ci.Skip(t, "this test needs Docker, but "+problem+"; "+howToFix)
	}
}

// shortSkip is why a Docker test skips under go test -short.
const shortSkip = "skipping in -short mode: needs a Docker engine (make test runs it)"

// Require makes a test need a Docker engine: when the docker CLI is absent
// or no engine answers, it skips with a message saying so and how to get
// one (scripts/ensure-docker.sh) — unless CI is set (ci.Running), where
// it fails (CI must run Docker tests, not skip them).
//
// Under go test -short (make unit) it skips without asking for an engine,
// CI or not: -short asks for the tests that need nothing but Go and a few
// Debian tools, and make test runs the rest.
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip(shortSkip)
	}
	need(t, probe().problem())
}

// RequireCLI makes a test need the docker CLI but no engine (a test of
// how the CLI transport fails without one): where the CLI is not on
// PATH it skips, saying so, unless CI is set, where it fails. It runs
// under -short: it starts nothing.
func RequireCLI(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath(dockerCLI); err != nil {
		need(t, probeResult{noCLI: err}.problem())
	}
}

// engineError is BuildAll's counterpart of Require: why there is no
// usable engine, or nil.
func engineError() error {
	if problem := probe().problem(); problem != "" {
		return fmt.Errorf("%s; %s", problem, howToFix)
	}
	return nil
}
