package dockertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// commandTimeout bounds one docker CLI call made for a test, so a wedged
// engine fails the test instead of hanging it until the test binary's
// global timeout.
const commandTimeout = 2 * time.Minute

// result is what one docker CLI call printed and how it exited.
type result struct {
	stdout, stderr string
	code           int // the exit status; -1 when the CLI did not exit by itself
}

// run runs the docker CLI with args, feeding it stdin when non-nil. The
// error, for a failed start or a non-zero exit, carries the command line
// and the CLI's stderr: that is where docker says what went wrong.
func run(ctx context.Context, stdin []byte, args ...string) (result, error) {
	cmd := exec.CommandContext(ctx, dockerCLI, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
	if err != nil {
		msg := strings.TrimSpace(res.stderr)
		if msg == "" {
			msg = "(no stderr)"
		}
		return res, fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	return res, nil
}

// Docker runs the docker CLI with args and returns its stdout with
// surrounding whitespace trimmed (what `docker ps -q` or `docker inspect
// --format` callers want). A failure, or a non-zero exit, fails the test
// with docker's stderr. It does not use t.Context, so it also works inside
// t.Cleanup functions, where that context is already cancelled.
func Docker(t testing.TB, args ...string) (stdout string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	res, err := run(ctx, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(res.stdout)
}

// containers lists the IDs of every container, running or not, that
// matches the label selector ("key" or "key=value").
func containers(ctx context.Context, labelSelector string) ([]string, error) {
	res, err := run(ctx, nil, "ps", "--all", "--quiet", "--no-trunc", "--filter", "label="+labelSelector)
	if err != nil {
		return nil, err
	}
	return strings.Fields(res.stdout), nil
}

// removeContainers force-removes every container matching the selector.
func removeContainers(ctx context.Context, labelSelector string) error {
	ids, err := containers(ctx, labelSelector)
	if err != nil || len(ids) == 0 {
		return err
	}
	_, err = run(ctx, nil, append([]string{"rm", "--force", "--volumes"}, ids...)...)
	if err != nil && isRemovalRace(err) {
		// A --rm container can disappear between ps and rm; that is the
		// outcome we wanted, so check again rather than fail.
		ids, err = containers(ctx, labelSelector)
		if err == nil && len(ids) > 0 {
			err = fmt.Errorf("containers %s survived docker rm --force", strings.Join(ids, " "))
		}
	}
	return err
}

// isRemovalRace reports whether docker rm failed only because a container
// was already gone or already being removed.
func isRemovalRace(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "No such container") || strings.Contains(msg, "is already in progress")
}

// Cleanup registers a t.Cleanup that force-removes every container carrying
// the label selector ("key" or "key=value"), whatever state it is in. Label
// the containers a test starts with something unique to the test and call
// this before starting them, so a failed test leaves nothing behind.
//
// Where there is no engine (no docker CLI, or none answers) the cleanup
// does nothing: nothing can have been started, and a test registered
// before it skipped for want of Docker (make unit) must still pass.
func Cleanup(t testing.TB, labelSelector string) {
	t.Helper()
	CleanupWithEngine(t, func() {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		if err := removeContainers(ctx, labelSelector); err != nil {
			t.Errorf("removing containers labelled %s: %v", labelSelector, err)
		}
	})
}

// CleanupWithEngine registers f as a t.Cleanup that runs only where an
// engine is usable: without one, nothing of the engine's can have been
// made, and asking it would fail a test that skipped for want of it.
func CleanupWithEngine(t testing.TB, f func()) {
	t.Helper()
	t.Cleanup(func() {
		if probe().problem() == "" {
			f()
		}
	})
}

// removalGrace is how long AssertNoContainers waits for containers to go:
// the engine removes a --rm container asynchronously once it has been
// killed, so "gone" can lag the kill by a moment.
const removalGrace = 5 * time.Second

// AssertNoContainers fails the test, listing them, if containers carrying
// the label selector still exist after a short grace period.
func AssertNoContainers(t testing.TB, labelSelector string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	deadline := time.Now().Add(removalGrace)
	for {
		ids, err := containers(ctx, labelSelector)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			res, _ := run(ctx, nil, "ps", "--all", "--filter", "label="+labelSelector,
				"--format", "{{.ID}} {{.Image}} {{.Status}} {{.Command}}")
			t.Errorf("%d container(s) labelled %s remain:\n%s", len(ids), labelSelector, res.stdout)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runLabelKey is the label UniqueLabel gives a test's containers.
const runLabelKey = "org.promptkit.test.run"

// UniqueLabel returns a "key=value" label no other test uses, for the
// containers this test starts (docker run --label LABEL), and registers
// Cleanup for it, so they are removed however the test ends.
func UniqueLabel(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '.'
		}
		return r
	}, t.Name())
	label := runLabelKey + "=" + name + "." + hex.EncodeToString(b[:])
	Cleanup(t, label)
	return label
}
