package proctest

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Tracer is a Python program that ptrace-attaches to every thread of the
// process argv[1] (a Go program runs on several, and one stopped thread
// would not stop it), waits until they are stopped, appends its own PID
// to the file argv[2], and sleeps, holding the process in ptrace-stop for
// as long as it lives. Further arguments are ignored (a marker, say).
const Tracer = `import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
pid = sys.argv[1]
for tid in os.listdir("/proc/%s/task" % pid):
    if libc.ptrace(16, int(tid), None, None) != 0:
        sys.exit("PTRACE_ATTACH: " + os.strerror(ctypes.get_errno()))
    os.waitpid(int(tid), 0x40000000)
with open(sys.argv[2], "a") as f:
    f.write("%d\n" % os.getpid())
time.sleep(300)
`

// WaitStopped waits up to ten seconds until pid is stopped (state T) or
// ptrace-stopped (t), and fails the test if it is not.
func WaitStopped(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, state, _, ok := Stat(pid)
		if ok && strings.IndexByte("Tt", state) >= 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never stopped (state %q)", pid, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// PtraceRefused says why Tracer could not attach here to a process that
// is not its descendant (Yama's ptrace_scope 1 or 2 without root, or 3),
// or returns "" when it could.
func PtraceRefused() string {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil {
		return "" // no Yama: the same user may trace
	}
	switch scope := strings.TrimSpace(string(b)); {
	case scope == "3":
		return "kernel.yama.ptrace_scope is 3: no process may be traced"
	case scope != "0" && os.Geteuid() != 0:
		return "kernel.yama.ptrace_scope is " + scope + ": only root may trace a process that is not its descendant"
	}
	return ""
}

// RequirePtrace skips the test, saying why, where PtraceRefused does.
func RequirePtrace(t testing.TB) {
	t.Helper()
	if why := PtraceRefused(); why != "" {
		t.Skip(why)
	}
}
