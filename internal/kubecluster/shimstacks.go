package kubecluster

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// WriteShimStacks asks each of this cluster's runtime shims for its
// goroutines and writes, at most max lines, those blocked for a minute
// or more, alike ones counted together: a shim that stopped answering
// containerd ("get state ... context deadline exceeded") shows which of
// its locks or pipes it waits on. A shim dumps its goroutines into its
// log, which containerd copies to its own, when sent SIGUSR1.
func (c *Cluster) WriteShimStacks(w io.Writer, max int) {
	shims := c.shims(supervisor.Processes())
	dumps, err := c.shimStacks(shims, 3*time.Second)
	if err != nil {
		fmt.Fprintf(w, "kubecluster: the shims' goroutines: %v\n", err)
	}
	lines := 0
	for _, pid := range shims {
		dump, ok := dumps[pid]
		if !ok {
			fmt.Fprintf(w, "kubecluster: shim %d: no goroutine dump in containerd's log\n", pid)
			continue
		}
		blocked := summarizeBlocked(dump, time.Minute)
		if len(blocked) == 0 {
			continue
		}
		fmt.Fprintf(w, "kubecluster: shim %d: goroutines blocked a minute or more:\n", pid)
		for _, b := range blocked {
			if lines++; lines > max {
				fmt.Fprintln(w, "  …")
				return
			}
			fmt.Fprintln(w, "  "+b)
		}
	}
}

// shimStacks sends each shim of pids SIGUSR1 and returns, by PID, the
// goroutine dumps they write to containerd's log, waiting at most wait
// for all of them; a shim that wrote none by then is left out.
func (c *Cluster) shimStacks(pids []int, wait time.Duration) (map[int]string, error) {
	log := c.l.log("containerd")
	var offset int64
	if fi, err := os.Stat(log); err == nil {
		offset = fi.Size()
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGUSR1) // one gone meanwhile writes no dump
	}
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		dumps, err := findStackDumps(log, offset)
		if err != nil {
			return nil, err
		}
		all := true
		for _, pid := range pids {
			_, ok := dumps[pid]
			all = all && ok
		}
		if all || time.Now().After(deadline) {
			return dumps, nil
		}
	}
}

// findStackDumps returns, by PID, the goroutine dumps the shims logged in
// the file log after offset. A shim logs with logrus' text format: a dump
// is one line, msg="..." quoted as Go does, the shim's PID among the
// fields after it (pid=N).
func findStackDumps(log string, offset int64) (map[int]string, error) {
	f, err := os.Open(log) // #nosec G304 -- containerd's log in the cluster's state directory
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	dumps := map[int]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "BEGIN goroutine stack dump") {
			continue
		}
		_, quoted, ok := strings.Cut(line, " msg=")
		if !ok {
			continue
		}
		q, err := strconv.QuotedPrefix(quoted)
		if err != nil {
			continue
		}
		msg, err := strconv.Unquote(q)
		m := pidField.FindStringSubmatch(quoted[len(q):])
		if err != nil || m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		dumps[pid] = msg
	}
	return dumps, sc.Err()
}

// pidField matches the pid field among those after a logrus line's
// quoted message.
var pidField = regexp.MustCompile(` pid=(\d+)(?: |$)`)

// goroutineHeader matches "goroutine 7 [semacquire, 3 minutes]:".
var goroutineHeader = regexp.MustCompile(`^goroutine \d+ \[([^,\]]+)(?:, (\d+) minutes)?[^\]]*\]:$`)

// summarizeBlocked returns, for the goroutines of dump blocked at least
// min, one line each: how many alike, what they wait on, and the chain
// of functions they are in (innermost first, the runtime's and the
// standard library's left out), most numerous first.
func summarizeBlocked(dump string, min time.Duration) []string {
	counts := map[string]int{}
	for g := range strings.SplitSeq(dump, "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		m := goroutineHeader.FindStringSubmatch(lines[0])
		if m == nil || m[2] == "" {
			continue
		}
		if n, _ := strconv.Atoi(m[2]); time.Duration(n)*time.Minute < min {
			continue
		}
		var chain []string // functions outside the runtime and the standard library
		for _, l := range lines[1:] {
			first, _, _ := strings.Cut(l, "/")
			if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "created by ") || !strings.Contains(l, "/") || !strings.Contains(first, ".") {
				continue
			}
			fn := l[strings.LastIndexByte(l, '/')+1:]
			if i := strings.LastIndexByte(fn, '('); i > 0 {
				fn = fn[:i]
			}
			if len(chain) < 4 {
				chain = append(chain, fn)
			}
		}
		counts["["+m[1]+"] "+strings.Join(chain, " ← ")]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%d× %s", counts[k], k)
	}
	return out
}
