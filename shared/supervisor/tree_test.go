package supervisor

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

func TestProcessesListsThisProcess(t *testing.T) {
	procs := Processes()
	i := slices.IndexFunc(procs, func(p Process) bool { return p.PID == os.Getpid() })
	if i < 0 {
		t.Fatal("this process is not listed")
	}
	p := procs[i]
	if p.PPID != os.Getppid() || p.PGID != syscall.Getpgrp() {
		t.Errorf("got %+v, want parent %d and group %d", p, os.Getppid(), syscall.Getpgrp())
	}
}

// descendants finds a grandchild through its parent and leaves
// unrelated processes alone.
func TestDescendants(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & echo ready; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	got := descendants(cmd.Process.Pid, 0)
	if len(got) != 1 {
		t.Fatalf("descendants of sh = %v, want its one sleep", got)
	}
	_ = syscall.Kill(got[0], syscall.SIGKILL)
}
