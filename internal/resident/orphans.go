package resident

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
	"golang.org/x/sys/unix"
)

// CallEnv names the variable that marks every process of a call with the
// call's token. A process whose parent has exited (a double-forked
// daemon) is no longer in its call's tree, but the resident, a child
// subreaper, becomes its parent, and the mark it inherited says whose it
// is.
const CallEnv = "PROMPTKIT_SANDBOX_CALL"

// orphans tracks what sweeping needs: which children of the resident are
// calls' own processes, and which calls still run.
//
// Every start of a call's process holds starting for reading, from the
// fork until its PID is in leaders: between fork and exec the child
// still has the resident's environment, unmarked, and a sweep must not
// take it for an orphan. A sweep holds starting for writing.
type orphans struct {
	reaper bool   // the resident is a child subreaper: orphans are ours
	nonce  string // this resident's, so tokens of another never match
	seq    uint64 // under starting's write side or s.mu; see token

	leaders map[int]bool    // PIDs of calls' processes not yet reaped
	live    map[string]bool // tokens of calls whose processes run
}

func newOrphans() orphans {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var reaper int32
	// #nosec G103 -- prctl(PR_GET_CHILD_SUBREAPER) writes an int through this pointer; x/sys/unix has no typed call for it
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&reaper)), 0, 0, 0)
	return orphans{
		reaper:  err == nil && reaper != 0,
		nonce:   hex.EncodeToString(b[:]),
		leaders: map[int]bool{},
		live:    map[string]bool{},
	}
}

// sweep kills what the call with token left behind, and every orphan
// that names no running call (its mark removed or never inherited): the
// resident's children that are no call's own process. Orphans of calls
// still running are left to their calls' sweeps. An empty token sweeps
// for no call in particular (the resident's end: nothing runs then).
func (s *server) sweep(token string) {
	if !s.orphans.reaper {
		return // a resident served in a test's own process, say
	}
	s.starting.Lock()
	defer s.starting.Unlock()
	// A killed orphan's children become ours in turn: sweep until a pass
	// finds none. The bound only guards against a kernel that never lets
	// go; a fork bomb is frozen before it is killed.
	for range 50 {
		var doomed []int
		for _, pid := range children() {
			if s.isLeader(pid) || reaped(pid) {
				continue
			}
			if t, ok := callToken(pid); ok && t != token && s.isLive(t) {
				continue
			}
			doomed = append(doomed, pid)
		}
		if len(doomed) == 0 {
			return
		}
		var frozen []int
		for _, pid := range doomed {
			frozen = append(frozen, freezeTree(pid)...)
		}
		killFrozen(frozen)
		for _, pid := range doomed {
			reapWithin(pid, time.Second)
		}
	}
}

func (s *server) isLeader(pid int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.orphans.leaders[pid]
}

func (s *server) isLive(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.orphans.live[token]
}

// token returns a new call token and marks it live.
func (s *server) token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orphans.seq++
	t := s.orphans.nonce + "-" + strconv.FormatUint(s.orphans.seq, 10)
	s.orphans.live[t] = true
	return t
}

// ended forgets a call's token and its process, once reaped.
func (s *server) ended(token string, pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.orphans.live, token)
	delete(s.orphans.leaders, pid)
}

// children lists the resident's children. Each thread's children file
// holds those it forked or was handed as a subreaper: a few small reads,
// where a walk of /proc reads a file per process. A kernel without those
// files (CONFIG_PROC_CHILDREN) gets the walk.
func children() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return walkChildren()
	}
	var out []int
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		if errors.Is(err, fs.ErrNotExist) && len(out) == 0 {
			return walkChildren()
		}
		for f := range strings.FieldsSeq(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// walkChildren lists the resident's children from every process's
// parent in /proc.
func walkChildren() []int {
	self := os.Getpid()
	var out []int
	for _, p := range supervisor.Processes() {
		if p.PPID == self {
			out = append(out, p.PID)
		}
	}
	return out
}

// callToken reads the call mark from a process's environment as it was
// when the process started. A process whose environment cannot be read
// (gone, or made non-dumpable) has none.
func callToken(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	key := []byte(CallEnv + "=")
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, key); ok {
			return string(v), true
		}
	}
	return "", false
}

// reaped reaps pid if it has exited and says whether it is gone (reaped
// now, or no child of ours to reap).
func reaped(pid int) bool {
	var ws syscall.WaitStatus
	for {
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		return err != nil || got == pid
	}
}

// reapWithin reaps pid, SIGKILLed, waiting at most d: a process in an
// uninterruptible sleep is left to the next sweep.
func reapWithin(pid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for !reaped(pid) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}
