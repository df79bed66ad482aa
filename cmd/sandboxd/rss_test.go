package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// Ceilings of TestResidentMemory, in kB. Issue 34's targets are an idle
// sandboxd at or under 20 MB and at or under 30 MB after a session of
// calls. Measured on a 2-core amd64 machine: 18.5-18.6 MB idle (5.1-5.2
// MB of it anonymous, the rest the binary's pages), 21.3-21.5 MB after
// the 100 calls, and 26.9-27.1 MB with the cgroup keeper it has started
// by then. Most of the binary is resident (the kernel maps in the pages
// around each one touched), so what it links counts: it was 22.1 MB idle
// while the OTLP exporter linked gRPC (shared/tracing's otlp.go says
// more), and the keeper held 18 MB while it ran sandboxd's initialisers
// (package keeper). The ceilings leave the Go runtime's heap growth a
// third or more above that, and catch a regression that brings either
// back.
const (
	idleRSSCeilingKB      = 25 << 10
	callsRSSCeilingKB     = 30 << 10
	callsTreeRSSCeilingKB = 40 << 10
	// The targets, logged beside what is measured.
	idleRSSTargetKB  = 20 << 10
	callsRSSTargetKB = 30 << 10
)

// TestResidentMemory starts the built sandboxd as a container does
// (token in the environment, so it seals it and re-executes itself) and
// measures its resident set when idle after the first initialize, and
// after 100 mixed calls through the official MCP client.
func TestResidentMemory(t *testing.T) {
	token := strings.Repeat("7", 64)
	s := startHTTPEnv(t, []string{"SANDBOXD_TOKEN=" + token}, "--workspace", t.TempDir())
	s.token = token
	pid := s.cmd.Process.Pid
	cs := s.connect(t)

	idle, idleTree := treeRSS(t, "idle", pid)
	t.Logf("idle after initialize: sandboxd %s, with what runs under it %s (issue 34's target: <= %s)", kB(idle), kB(idleTree), kB(idleRSSTargetKB))

	calls := []func(round int){
		func(r int) {
			callTool(t, cs, "Write", map[string]any{"file_path": fmt.Sprintf("dir/f%d.txt", r), "content": fmt.Sprintf("round %d\nvalue old\n", r)})
		},
		func(r int) {
			if got := callTool(t, cs, "Read", map[string]any{"file_path": fmt.Sprintf("dir/f%d.txt", r)}); !strings.Contains(got, "value old") {
				t.Fatalf("Read: %q", got)
			}
		},
		func(r int) {
			callTool(t, cs, "Edit", map[string]any{"file_path": fmt.Sprintf("dir/f%d.txt", r), "old_string": "value old", "new_string": "value new"})
		},
		func(r int) {
			if got := callTool(t, cs, "Glob", map[string]any{"pattern": "**/*.txt"}); !strings.Contains(got, fmt.Sprintf("f%d.txt", r)) {
				t.Fatalf("Glob: %q", got)
			}
		},
		func(r int) {
			if got := callTool(t, cs, "Grep", map[string]any{"pattern": "value new", "output_mode": "files_with_matches"}); !strings.Contains(got, fmt.Sprintf("f%d.txt", r)) {
				t.Fatalf("Grep: %q", got)
			}
		},
		func(int) {
			if got := callTool(t, cs, "Bash", map[string]any{"command": "true"}); got != "" {
				t.Fatalf("Bash: %q", got)
			}
		},
	}
	for i := range 100 {
		calls[i%len(calls)](i / len(calls))
	}
	after, afterTree := treeRSS(t, "after 100 calls", pid)
	t.Logf("after 100 calls: sandboxd %s, with what runs under it %s (issue 34's target: <= %s)", kB(after), kB(afterTree), kB(callsRSSTargetKB))

	for _, c := range []struct {
		what         string
		got, ceiling int
	}{
		{"idle, sandboxd and what runs under it", idleTree, idleRSSCeilingKB},
		{"after 100 calls, sandboxd alone", after, callsRSSCeilingKB},
		{"after 100 calls, sandboxd and what runs under it", afterTree, callsTreeRSSCeilingKB},
	} {
		if c.got > c.ceiling {
			t.Errorf("%s: %s resident, over the ceiling of %s", c.what, kB(c.got), kB(c.ceiling))
		}
	}
}

// procMem is what /proc/PID/status says a process holds resident, in
// kB: in all, and in anonymous and file-backed pages.
type procMem struct{ rss, anon, file int }

func (m procMem) String() string {
	return fmt.Sprintf("%s (anon %d kB, file %d kB)", kB(m.rss), m.anon, m.file)
}

// treeRSS is the resident set, in kB, of pid and every process under
// it, logging each. The seal re-executes sandboxd in its own process
// (seal.go: an exec, the PID stays), so pid is the process that serves.
// What it starts and keeps running counts too: the cgroup keeper, a
// second start of the same binary that outlives the calls (its
// file-backed pages are mostly the binary's, which the kernel shares
// with sandboxd's, so the sum overstates what the two take together).
func treeRSS(t *testing.T, when string, pid int) (serving, total int) {
	t.Helper()
	m, ok := readMem(pid)
	if !ok {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	t.Logf("%s: sandboxd (pid %d) holds %s", when, pid, m)
	total = m.rss
	for _, c := range descendants(pid) {
		if cm, ok := readMem(c); ok {
			t.Logf("%s: %s (pid %d, under sandboxd) holds %s", when, comm(c), c, cm)
			total += cm.rss
		}
	}
	return m.rss, total
}

// descendants lists the processes under pid, from one snapshot of
// /proc: children before their own children.
func descendants(pid int) []int {
	kids := map[int][]int{}
	for _, p := range supervisor.Processes() {
		kids[p.PPID] = append(kids[p.PPID], p.PID)
	}
	var out []int
	for queue := kids[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, kids[queue[0]]...)
	}
	return out
}

// readMem reads /proc/PID/status: readable even for sandboxd, which
// makes itself non-dumpable.
func readMem(pid int) (procMem, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMem{}, false
	}
	var m procMem
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			m.rss, found = n, true
		case "RssAnon":
			m.anon = n
		case "RssFile":
			m.file = n
		}
	}
	return m, found
}

func comm(pid int) string {
	name, _, _, _ := proctest.Stat(pid)
	return name
}

func kB(n int) string { return fmt.Sprintf("%.1f MB (%d kB)", float64(n)/1024, n) }
