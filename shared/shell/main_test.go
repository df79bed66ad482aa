package shell

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// roleEnv makes the test binary act as a host process for tests that must
// kill the host itself.
const roleEnv = "SHELL_TEST_ROLE"

func TestMain(m *testing.M) {
	// Before Init: this role is a program that never calls it.
	if os.Getenv(roleEnv) == "no-init" {
		os.Exit(noInitMain())
	}
	// The containment tests need this binary started as a supervisor
	// and as the cgroup keeper, as a program's is.
	supervisor.Init()
	switch os.Getenv(roleEnv) {
	case "pdeathsig-host":
		os.Exit(pdeathsigHost())
	case "escape-host":
		os.Exit(escapeHost())
	}
	os.Exit(m.Run())
}

// pdeathsigHost runs a process that records its PID and sleeps; the test
// SIGKILLs this host and expects the process to die with it.
func pdeathsigHost() int {
	_, err := Run(context.Background(), sandbox.Request{
		Command: "sh",
		Args:    []string{"-c", `echo $$ > "$PIDFILE.tmp" && mv "$PIDFILE.tmp" "$PIDFILE" && exec sleep 120`},
		Env:     []string{"PIDFILE"},
	}, Options{Timeout: 5 * time.Minute})
	fmt.Fprintln(os.Stderr, "host: run returned:", err)
	return 1
}

// escapeHost runs escapeStart and sleeps; the test SIGKILLs this host and
// expects every process of the call, the escaped ones too, to die with it.
func escapeHost() int {
	_, err := Run(context.Background(), sandbox.Request{
		Command: "sh",
		Args:    []string{"-c", escapeStart + "exec sleep 120", "sh", os.Getenv("PIDFILE")},
	}, Options{Timeout: 5 * time.Minute})
	fmt.Fprintln(os.Stderr, "host: run returned:", err)
	return 1
}
