package child

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Running lists the pids of this process's children that run the
// function registered as name: what a test looks for to prove that a
// cancelled or stopped call left none behind. Linux only (it reads
// /proc); elsewhere it finds none.
func Running(name string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	me := strconv.Itoa(os.Getpid())
	var pids []int
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat")) // #nosec G304 -- d is a /proc/PID directory from the glob above
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 || fields[1] != me {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ")) // #nosec G304 -- d is a /proc/PID directory from the glob above
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if kv == envName+"="+name {
				pid, _ := strconv.Atoi(filepath.Base(d))
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
