package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor/keeper"
)

// callCgroup is the cgroup v2 a call's processes run in: nothing leaves
// a cgroup without the rights to write another cgroup's procs file, so
// killing it kills everything the call started.
type callCgroup struct {
	dir  string
	fd   *os.File // the directory, for clone3's CLONE_INTO_CGROUP
	kill *os.File // its cgroup.kill, open for writing
}

// hostCgroups is the cgroup, made once per host process, that its calls'
// cgroups go in, with the keeper that removes it when the host exits.
var hostCgroups struct {
	once sync.Once
	dir  string // empty when cgroups are not available here
	why  error  // why not
	next atomic.Uint64
	// keeper is this process's end of the keeper's pipe: never closed,
	// and held here so that no finalizer closes it, which the keeper
	// would take for this process's end.
	keeper *os.File
	// spare holds cgroups made ahead of the calls that take them, never
	// used before; refilling is set while a goroutine makes more.
	spare     chan *callCgroup
	refilling atomic.Bool
}

// spareCgroups is how many cgroups are made ahead: a call takes one
// instead of making its own on its way, and its release is off the way
// too, which together were about 5% of a sandboxd Bash call of `true`.
const spareCgroups = 2

// removeWithin bounds how long a call's cgroup is waited for to empty,
// in the background, before its removal is left to the keeper.
const removeWithin = time.Second

// newCallCgroup gives a call a cgroup of its own: one made ahead when
// there is one, else one made now.
func newCallCgroup() (*callCgroup, error) {
	hostCgroups.once.Do(setUpHostCgroup)
	if hostCgroups.dir == "" {
		return nil, hostCgroups.why
	}
	defer refillSpares()
	select {
	case c := <-hostCgroups.spare:
		return c, nil
	default:
		return makeCallCgroup()
	}
}

// makeCallCgroup makes a new cgroup under the host's.
func makeCallCgroup() (*callCgroup, error) {
	dir := filepath.Join(hostCgroups.dir, "call-"+strconv.FormatUint(hostCgroups.next.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil { // #nosec G301 -- a cgroup: the usual mode of cgroupfs directories, and nothing in it is secret
		return nil, fmt.Errorf("make cgroup: %w", err)
	}
	fd, err := os.Open(dir) // #nosec G304 -- the cgroup made just above
	if err != nil {
		_ = syscall.Rmdir(dir)
		return nil, fmt.Errorf("open cgroup: %w", err)
	}
	kill, err := os.OpenFile(filepath.Join(dir, "cgroup.kill"), os.O_WRONLY, 0) // #nosec G304 -- in the cgroup made just above
	if err != nil {
		_ = fd.Close()
		_ = syscall.Rmdir(dir)
		return nil, fmt.Errorf("open cgroup.kill: %w", err)
	}
	return &callCgroup{dir: dir, fd: fd, kill: kill}, nil
}

// refillSpares makes spare cgroups up to spareCgroups, in a goroutine
// that ends once they are made (none waits between calls). One that
// cannot be made is made by the call that needs it, which then reports
// why; a refill asked for while one runs is left to the next call's.
func refillSpares() {
	if !hostCgroups.refilling.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer hostCgroups.refilling.Store(false)
		for len(hostCgroups.spare) < cap(hostCgroups.spare) {
			c, err := makeCallCgroup()
			if err != nil {
				return
			}
			hostCgroups.spare <- c
		}
	}()
}

// setUpHostCgroup makes the host's cgroup under its own, where the host
// may write (root, or a delegated subtree), and starts its keeper.
func setUpHostCgroup() {
	own, err := ownCgroup()
	if err != nil {
		hostCgroups.why = err
		return
	}
	dir := filepath.Join(own, fmt.Sprintf("promptkit-sandbox.%d", os.Getpid()))
	// #nosec G301 -- the host's cgroup: the usual mode of cgroupfs directories, nothing in it is secret
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		hostCgroups.why = fmt.Errorf("make cgroup in %s: %w", own, err)
		return
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = syscall.Rmdir(dir)
		hostCgroups.why = errors.New("the kernel has no cgroup.kill (Linux 5.14 or later)")
		return
	}
	if err := startKeeper(dir); err != nil {
		_ = syscall.Rmdir(dir)
		hostCgroups.why = fmt.Errorf("start the cgroup keeper: %w", err)
		return
	}
	hostCgroups.dir = dir
	hostCgroups.spare = make(chan *callCgroup, spareCgroups)
}

// startKeeper starts the process that kills and removes dir once this
// host is gone. It holds the read end of a pipe whose write end this
// process keeps, unused, until it exits.
func startKeeper(dir string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := &exec.Cmd{
		Path:        selfExe,
		Args:        []string{keeper.Name, dir},
		ExtraFiles:  []*os.File{r},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return err
	}
	hostCgroups.keeper = w
	// Not waited for: it outlives this process, unless something kills
	// it first, and then it stays a zombie until this process exits.
	// Waiting would take a goroutine for the life of the process.
	return cmd.Process.Release()
}

// ownCgroup finds this process's cgroup v2 directory: its path in
// /proc/self/cgroup under the mount point of the v2 hierarchy.
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var rel string
	found := false
	for line := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel, found = p, true
		}
	}
	if !found {
		return "", errors.New("no cgroup v2 hierarchy")
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(mounts))
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPEROPTS
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		f := strings.Fields(pre)
		if len(f) < 5 || f[3] != "/" {
			continue // a bind of a subtree: paths would not line up
		}
		return filepath.Join(f[4], rel), nil
	}
	return "", errors.New("no cgroup v2 hierarchy mounted")
}

// signal sends sig to every process in the cgroup, once; SIGKILL goes
// through cgroup.kill, which no process can race by forking. It reports
// whether the cgroup could be signalled.
func (c *callCgroup) signal(sig syscall.Signal) bool {
	if sig == syscall.SIGKILL {
		_, err := c.kill.Write([]byte("1"))
		return err == nil
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return false
	}
	for f := range strings.FieldsSeq(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, sig)
		}
	}
	return true
}

// release removes the cgroup, which the leader's exit has already
// emptied (group.leaderExited kills it), in the background: the call's
// result does not wait for it. One that does not empty in time is left
// to the keeper.
func (c *callCgroup) release() {
	_ = c.fd.Close()
	_ = c.kill.Close()
	go keeper.Remove(c.dir, removeWithin)
}
