package shell

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Isolation (Options.Isolated) puts a process and everything it starts in
// a Landlock domain of its own. Landlock lets a process ptrace another —
// and so read its /proc/PID/environ, mem, fd and the like — only when the
// other's domain is the reader's own or nested in it. Two isolated calls
// are sibling domains, so neither can read the other's environment, even
// as the same user: the secrets a call was given stay with it while its
// background processes run. The process table, signals and files work
// as before; the only access the domain denies otherwise is making block
// devices, which the ruleset must name something to exist at all.
//
// A ruleset that does not handle LANDLOCK_ACCESS_FS_REFER (ABI 2) denies
// every link or rename from one directory to another (EXDEV: `mv a/f
// b/`, cargo's and git's renames), so the ruleset handles it and grants
// it beneath "/", and a kernel of ABI 1 is taken for one without
// Landlock.
//
// Landlock domains belong to a thread, and a child inherits its forking
// thread's: so the process is started from a thread locked to one
// goroutine that entered a new domain first, and that thread is never
// handed back (the Go runtime ends a thread whose goroutine exits
// locked, and makes new threads from a clean one, never a locked one).

// ErrIsolationUnavailable is IsolationAvailable's error when the kernel
// or the seccomp filter the host runs under offers no Landlock.
var ErrIsolationUnavailable = errors.New("landlock is not available")

// landlockRuleset is the ABI 1 prefix of struct landlock_ruleset_attr,
// all this ruleset needs.
type landlockRuleset struct{ handledAccessFS uint64 }

// landlockPathBeneath is struct landlock_path_beneath_attr, which the
// kernel packs: the 4 bytes of padding Go adds after it are not read.
type landlockPathBeneath struct {
	allowedAccess uint64
	parentFD      int32
}

// minLandlockABI is the first ABI with LANDLOCK_ACCESS_FS_REFER.
const minLandlockABI = 2

var landlockProbe struct {
	once sync.Once
	err  error
}

// IsolationAvailable returns nil when Options.Isolated takes effect on
// this host, and why not otherwise.
func IsolationAvailable() error {
	landlockProbe.once.Do(func() {
		abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
		switch {
		case errno == unix.ENOSYS || errno == unix.EOPNOTSUPP || errno == unix.EPERM:
			landlockProbe.err = fmt.Errorf("%w: %v", ErrIsolationUnavailable, errno)
		case errno != 0:
			landlockProbe.err = fmt.Errorf("%w: probing its ABI: %v", ErrIsolationUnavailable, errno)
		case abi < minLandlockABI:
			landlockProbe.err = fmt.Errorf("%w: ABI %d, isolation needs %d (Linux 5.19) to allow renames across directories", ErrIsolationUnavailable, abi, minLandlockABI)
		}
	})
	return landlockProbe.err
}

// enterDomain makes the calling thread enter a new Landlock domain. A
// thread without CAP_SYS_ADMIN must set no_new_privs first, which its
// children then keep: setuid and file-capability programs do not gain
// privilege in them (sandboxd not running as root could not give them
// any to begin with).
func enterDomain() error {
	attr := landlockRuleset{handledAccessFS: unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_REFER}
	// #nosec G103 -- landlock_create_ruleset(2) takes the struct's address; x/sys/unix has no wrapper
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	root, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /: %w", err)
	}
	defer unix.Close(root)
	// #nosec G115 -- root is a file descriptor; landlock's parent_fd is an __s32
	rule := landlockPathBeneath{allowedAccess: unix.LANDLOCK_ACCESS_FS_REFER, parentFD: int32(root)}
	// #nosec G103 -- landlock_add_rule(2) takes the rule's address; x/sys/unix has no wrapper
	_, _, errno = unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_add_rule: %w", errno)
	}
	_, _, errno = unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0)
	if errno == unix.EPERM {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
		}
		_, _, errno = unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0)
	}
	if errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// startIsolated starts cmd in a new Landlock domain. When the process
// has a parent-death signal, which Linux ties to the thread that forked
// it, the thread lives until exited is closed.
func startIsolated(cmd *exec.Cmd, exited <-chan struct{}) error {
	holdThread := cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Never unlocked: the thread is in the domain for good.
		if err := enterDomain(); err != nil {
			started <- fmt.Errorf("isolate: %w", err)
			return
		}
		err := cmd.Start()
		started <- err
		if err == nil && holdThread {
			<-exited
		}
	}()
	return <-started
}
