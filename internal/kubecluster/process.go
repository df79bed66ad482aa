package kubecluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Every component runs as a child process in a session of its own, so a
// Ctrl-C meant for `make kube-up` or `go test` does not reach it, with its
// output in <dir>/logs/<name>.log and its PID in <dir>/run/<name>.pid.
// Stop finds them by those files, which also lets `make kube-down` (another
// process) stop what `make kube-up` started. Every component's command
// line names the state directory, which is how sweep finds anything left
// over (containerd's shims, a crashed run's processes).

// startProcess starts a component and records its PID.
func startProcess(l layout, name, bin string, args ...string) (*exec.Cmd, error) {
	// #nosec G302 -- a test cluster component's log, for whoever runs the tests to read
	logFile, err := os.OpenFile(l.log(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = string(l)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	if err := os.WriteFile(l.pidFile(name), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil { // #nosec G306 -- a PID file, which make kube-down reads
		_ = cmd.Process.Kill()
		return nil, err
	}
	return cmd, nil
}

// stopProcess stops the named component: SIGTERM, then SIGKILL after
// grace. A PID is only signalled while its command line still names the
// state directory, so a reused PID is never hit.
func stopProcess(l layout, name string, grace time.Duration) error {
	data, err := os.ReadFile(l.pidFile(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return fmt.Errorf("%s: %w", l.pidFile(name), err)
	}
	if ours(l, pid) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if !waitGone(l, pid, grace) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if !waitGone(l, pid, 5*time.Second) {
				return fmt.Errorf("%s (pid %d) survived SIGKILL", name, pid)
			}
		}
	}
	return os.Remove(l.pidFile(name))
}

// ours reports whether pid is a live (not zombie) process whose command
// line mentions the state directory.
func ours(l layout, pid int) bool {
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || !bytes.Contains(cmdline, []byte(string(l))) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state is the field after the parenthesised command name.
	if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
		return false
	}
	return true
}

// waitGone waits up to d for pid to stop being ours.
func waitGone(l layout, pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for ours(l, pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// sweepable are the programs sweep may kill: the components, containerd
// and its shims, runc. A shell or an editor with a log file open stays.
var sweepable = append([]string{"etcd", "containerd", "containerd-shim-runc-v2", "containerd-shim", "runc"}, binaries...)

// sweep SIGKILLs every process of a sweepable program whose command line
// names the state directory: containerd's shims, and whatever a crashed
// run left behind. It returns what it killed.
func sweep(l layout) []string {
	var killed []string
	for range 3 { // a killed parent's children can appear in between
		found := false
		for _, pid := range pids() {
			if pid == os.Getpid() || !ours(l, pid) || !sweepableExe(pid) {
				continue
			}
			killed = append(killed, fmt.Sprintf("%d %s", pid, commandLine(pid)))
			_ = syscall.Kill(pid, syscall.SIGKILL)
			waitGone(l, pid, 5*time.Second)
			found = true
		}
		if !found {
			break
		}
	}
	return killed
}

// pids lists every process on the machine.
func pids() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// waitFor polls check every 100 ms until it succeeds or ctx ends, and
// returns check's last error with what was awaited.
func waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	var last error
	for {
		if last = check(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sweepableExe reports whether pid runs one of the sweepable programs.
func sweepableExe(pid int) bool {
	return contains(sweepable, program(pid))
}

// program is the file name of the program pid runs; "" once it is gone.
func program(pid int) string {
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	if err != nil {
		return ""
	}
	return filepath.Base(strings.TrimSuffix(exe, " (deleted)"))
}

// commandLine is pid's command line, its arguments joined by spaces; ""
// once it is gone.
func commandLine(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return string(bytes.ReplaceAll(bytes.TrimSuffix(b, []byte{0}), []byte{0}, []byte{' '}))
}
