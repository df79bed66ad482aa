package dockertest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"testing"
)

// runIn runs `docker run --rm -i --network none` with the test's unique
// label and returns what the container printed and its exit status; only
// a failure of docker itself fails the test.
func runIn(t *testing.T, image string, stdin []byte, runArgs []string, command ...string) result {
	t.Helper()
	label := UniqueLabel(t)
	args := append([]string{"run", "--rm", "-i", "--network", "none", "--label", label}, runArgs...)
	args = append(append(args, image), command...)
	if stdin == nil {
		stdin = []byte{}
	}
	res, err := run(context.Background(), stdin, args...)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	AssertNoContainers(t, label)
	return res
}

// recorder is a testing.TB that records failures instead of failing, for
// testing the helpers' own failures. It records skips and then skips.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	failed  []string
	skipped string
}

func (r *recorder) Skip(args ...any) {
	r.TB.Helper()
	r.mu.Lock()
	r.skipped = fmt.Sprint(args...)
	r.mu.Unlock()
	r.TB.Skip(args...)
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, format)
}

func (r *recorder) Fatal(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, "fatal: "+fmt.Sprint(args...))
}
