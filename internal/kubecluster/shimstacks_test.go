package kubecluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// A dump as a shim logs it: the exit loop and a Start waiting on the
// same lock for minutes, one goroutine blocked briefly, one running.
const sampleDump = `goroutine 1 [running]:
main.main()
	/src/main.go:10 +0x1

goroutine 7 [sync.Mutex.Lock, 3 minutes]:
sync.runtime_SemacquireMutex(0x0?, 0x0?, 0x0?)
	/usr/lib/go/src/runtime/sema.go:77 +0x25
sync.(*Mutex).lockSlow(0xc000120000)
	/usr/lib/go/src/sync/mutex.go:171 +0x165
github.com/containerd/containerd/runtime/v2/runc/task.(*service).sendL(0xc000120000, {0x0, 0x0})
	/src/service.go:700 +0x2f
github.com/containerd/containerd/runtime/v2/runc/task.(*service).checkProcesses(0xc000120000, {0x0, 0x0, 0x0})
	/src/service.go:650 +0x3a
github.com/containerd/containerd/runtime/v2/runc/task.(*service).processExits(0xc000120000)
	/src/service.go:620 +0x3a
created by github.com/containerd/containerd/runtime/v2/runc/task.NewTaskService in goroutine 1
	/src/service.go:100 +0x1

goroutine 9 [sync.Mutex.Lock, 2 minutes]:
sync.(*Mutex).lockSlow(0xc000120000)
	/usr/lib/go/src/sync/mutex.go:171 +0x165
github.com/containerd/containerd/runtime/v2/runc/task.(*service).getContainer(0xc000120000, {0x0, 0x0})
	/src/service.go:800 +0x2f
github.com/containerd/containerd/runtime/v2/runc/task.(*service).State(0xc000120000, {0x0, 0x0}, 0x0)
	/src/service.go:276 +0x2f

goroutine 10 [sync.Mutex.Lock, 2 minutes]:
github.com/containerd/containerd/runtime/v2/runc/task.(*service).getContainer(0xc000120000, {0x0, 0x0})
	/src/service.go:800 +0x2f
github.com/containerd/containerd/runtime/v2/runc/task.(*service).State(0xc000120000, {0x0, 0x0}, 0x0)
	/src/service.go:276 +0x2f

goroutine 11 [chan receive]:
github.com/containerd/containerd/runtime/v2/runc/task.(*service).forward(0xc000120000)
	/src/service.go:900 +0x2f
`

func TestSummarizeBlockedGroupsWhatWaitsAMinuteOrMore(t *testing.T) {
	got := summarizeBlocked(sampleDump, time.Minute)
	want := []string{
		"2× [sync.Mutex.Lock] task.(*service).getContainer ← task.(*service).State",
		"1× [sync.Mutex.Lock] task.(*service).sendL ← task.(*service).checkProcesses ← task.(*service).processExits",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := summarizeBlocked(sampleDump, 3*time.Minute); len(got) != 1 || !strings.Contains(got[0], "checkProcesses") {
		t.Errorf("at 3 minutes, got %q; want the exit loop alone", got)
	}
}

// TestFindStackDumpsReadsTheShimsLinesAfterOffset: only dumps logged
// after the offset are returned, unquoted, each under its shim's PID.
func TestFindStackDumpsReadsTheShimsLinesAfterOffset(t *testing.T) {
	log := filepath.Join(t.TempDir(), "containerd.log")
	line := func(pid int, msg string) string {
		return fmt.Sprintf("time=\"2026-11-29T12:00:00Z\" level=info msg=%s namespace=k8s.io path=/run/x pid=%d\n", strconv.Quote(msg), pid)
	}
	old := line(42, "=== BEGIN goroutine stack dump ===\nold\n=== END goroutine stack dump ===")
	other := line(420, "=== BEGIN goroutine stack dump ===\nother pid=42\n=== END goroutine stack dump ===")
	fresh := line(42, "=== BEGIN goroutine stack dump ===\n"+sampleDump+"\n=== END goroutine stack dump ===")
	if err := os.WriteFile(log, []byte(old+other+fresh), 0o644); err != nil {
		t.Fatal(err)
	}
	dumps, err := findStackDumps(log, int64(len(old)))
	if got := dumps[42]; err != nil || !strings.Contains(got, "goroutine 7 [sync.Mutex.Lock, 3 minutes]:\n") || strings.Contains(got, "old") {
		t.Errorf("got %q, %v; want the fresh dump of shim 42", got, err)
	}
	if got := dumps[420]; !strings.Contains(got, "\nother pid=42\n") {
		t.Errorf("shim 420's dump = %q; want its own, a pid in its text notwithstanding", got)
	}
	if dumps, err := findStackDumps(log, int64(len(old)+len(other)+len(fresh))); len(dumps) != 0 || err != nil {
		t.Errorf("past every dump: got %v, %v; want nothing yet", dumps, err)
	}
}

// TestShimStacksOfARealShim: a shim of the cluster answers SIGUSR1 with
// its goroutines, the task service's among them.
func TestShimStacksOfARealShim(t *testing.T) {
	c := Shared(t)
	ns := c.Namespace(t)
	c.RunPod(t, hooksPod(c, t, ns, "box"))
	shims := c.shims(supervisor.Processes())
	if len(shims) == 0 {
		t.Fatal("no runtime shim of the cluster's containerd runs")
	}
	shim := shims[0]
	dumps, err := c.shimStacks([]int{shim}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if dump := dumps[shim]; !strings.Contains(dump, "runc/task.(*service)") {
		t.Errorf("the dump of shim %d holds no goroutine of the task service:\n%.2000s", shim, dumps[shim])
	}
}
