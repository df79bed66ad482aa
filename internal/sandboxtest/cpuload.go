package sandboxtest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// CPULoad starts n busy loops (`sh -c 'while :; do :; done'`) that run
// until the test ends, when they are killed and reaped: a bounded
// stand-in for a loaded machine (16 of them on two cores make a load
// average past 20). It returns the load average as /proc/loadavg says
// it when they start, for the test's log.
func CPULoad(t testing.TB, n int) string {
	t.Helper()
	var loops []*exec.Cmd
	t.Cleanup(func() {
		for _, c := range loops {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatalf("start a busy loop: %v", err)
		}
		loops = append(loops, c)
	}
	return LoadAverage()
}

// LoadAverage is the first three fields of /proc/loadavg, or why not.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return fmt.Sprintf("(load average: %v)", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return strings.TrimSpace(string(b))
	}
	return strings.Join(f[:3], " ")
}
