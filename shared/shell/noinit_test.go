package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// noInitMain is the main of a program that links shell and never calls
// supervisor.Init. It says that it runs, then runs a command twice with
// the containment left to shell and reports how it was held ("group":
// its parent is this process and its cgroup this process's), then once
// with a supervisor asked for, and reports the error.
func noInitMain() int {
	fmt.Println("main runs")
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	for range 2 {
		resp, err := Run(context.Background(), sandbox.Request{
			Command: "sh", Args: []string{"-c", `echo $PPID; cat /proc/self/cgroup`},
		}, Options{})
		if err != nil {
			fmt.Println("run:", err)
			return 1
		}
		parent, cgroup, _ := strings.Cut(string(resp.Stdout), "\n")
		if parent == strconv.Itoa(os.Getpid()) && cgroup == string(own) {
			fmt.Println("group")
		} else {
			fmt.Printf("parent %s, cgroup %q\n", parent, cgroup)
		}
	}
	os.Setenv(ContainmentEnv, string(ContainSupervisor))
	_, err = Run(context.Background(), sandbox.Request{Command: "true"}, Options{})
	fmt.Println(errors.Is(err, errNoInit), err)
	return 0
}

// TestNoInitNoTakeover: a program that did not call supervisor.Init
// runs its own main even when started under the supervisor's name, and
// its commands are held by their process group alone, with one warning
// that says why; asking for a supervisor there fails the call.
func TestNoInitNoTakeover(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// As a host would start a supervisor, less the descriptors it
	// gives one: a supervisor would fail without them (exit 125).
	cmd := &exec.Cmd{
		Path: self,
		Args: []string{supervisor.Name, "/bin/sh", "sh", "-c", "echo supervised"},
		Env:  append(os.Environ(), roleEnv+"=no-init", ContainmentEnv+"="),
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	want := fmt.Sprintf("main runs\ngroup\ngroup\ntrue contain command \"true\": %s=%s: %v\n", ContainmentEnv, ContainSupervisor, errNoInit)
	if string(out) != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
	if n := strings.Count(stderr.String(), errNoInit.Error()); n != 1 {
		t.Errorf("the warning appears %d times on stderr, want once:\n%s", n, stderr.String())
	}
}
