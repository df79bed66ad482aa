package child

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// The workers these tests start: children of the test binary.
func init() {
	Register("echo", func(in []byte) ([]byte, error) { return bytes.ToUpper(in), nil })
	Register("fail", func(in []byte) ([]byte, error) { return nil, errors.New("refused: " + string(in)) })
	// spin writes its pid to the file its input names, then waits an hour.
	Register("spin", func(in []byte) ([]byte, error) {
		if err := os.WriteFile(string(in), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return nil, err
		}
		time.Sleep(time.Hour)
		return nil, nil
	})
	// whoami answers with the user it runs as.
	Register("whoami", func([]byte) ([]byte, error) {
		return []byte(strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())), nil
	})
	// hog allocates and touches memory until it is stopped.
	Register("hog", func([]byte) ([]byte, error) {
		for {
			b := make([]byte, 64<<20)
			for i := range b {
				b[i] = 1
			}
			held = append(held, b)
		}
	})
}

// held keeps what hog allocates.
var held [][]byte

func TestMain(m *testing.M) {
	// As sandboxd's main does.
	supervisor.Init()
	Serve()
	os.Exit(m.Run())
}

var testLimits = Limits{Timeout: 20 * time.Second, Memory: 2 << 30, Output: 1 << 20}

func TestCallReturnsTheOutput(t *testing.T) {
	out, err := Call(context.Background(), Executable(), "echo", testLimits, []byte("hello"))
	if err != nil || string(out) != "HELLO" {
		t.Fatalf("out %q, err %v", out, err)
	}
}

func TestCallReturnsTheFunctionsError(t *testing.T) {
	_, err := Call(context.Background(), Executable(), "fail", testLimits, []byte("no"))
	var f *Failure
	if !errors.As(err, &f) || f.Msg != "refused: no" {
		t.Fatalf("err = %#v, want the Failure %q", err, "refused: no")
	}
}

func TestCallUnknownFunction(t *testing.T) {
	_, err := Call(context.Background(), Executable(), "nothing", testLimits, nil)
	if err == nil || !strings.Contains(err.Error(), `no child function "nothing" in this executable`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := Call(context.Background(), "", "echo", testLimits, nil); !errors.Is(err, ErrNoExecutable) {
		t.Fatalf("no executable: err = %v", err)
	}
}

// gone reports whether the process whose pid the file at path holds has
// been reaped (it is not a zombie either: Wait reaped it).
func gone(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		t.Fatalf("the child did not write its pid: %v", err)
	}
	_, err = os.Stat("/proc/" + string(data))
	return os.IsNotExist(err)
}

func TestTimeoutKillsTheChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	lim := testLimits
	lim.Timeout = 500 * time.Millisecond
	start := time.Now()
	_, err := Call(context.Background(), Executable(), "spin", lim, []byte(pidFile))
	if !errors.Is(err, ErrTimeout) || err.Error() != "time limit reached (500ms)" {
		t.Fatalf("err = %v, want the time limit", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if !gone(t, pidFile) {
		t.Error("the child is still there")
	}
}

func TestCancelKillsTheChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	seen := make(chan bool, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Running sees the child while it spins.
		for {
			data, _ := os.ReadFile(pidFile)
			if pid, _ := strconv.Atoi(string(data)); pid > 0 && slices.Contains(Running("spin"), pid) {
				seen <- true
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	_, err := Call(ctx, Executable(), "spin", testLimits, []byte(pidFile))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the cancellation", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if !gone(t, pidFile) {
		t.Error("the child is still there")
	}
	select {
	case <-seen:
	default:
		t.Error("Running never saw the child")
	}
	if left := Running("spin"); len(left) > 0 {
		t.Errorf("Running still sees %v", left)
	}
}

func TestMemoryLimitStopsTheChild(t *testing.T) {
	_, err := Call(context.Background(), Executable(), "hog", testLimits, nil)
	if raceEnabled && err != nil && (strings.Contains(err.Error(), "ThreadSanitizer") || strings.Contains(err.Error(), "-race mode")) {
		return
	}
	if !errors.Is(err, ErrMemory) || err.Error() != "memory limit reached (2048 MiB)" {
		t.Fatalf("err = %v, want the memory limit", err)
	}
}

func TestOutputLimit(t *testing.T) {
	lim := testLimits
	lim.Output = 10
	_, err := Call(context.Background(), Executable(), "echo", lim, []byte(strings.Repeat("x", 11)))
	if !errors.Is(err, ErrOutput) || err.Error() != "output limit reached (10 bytes)" {
		t.Fatalf("err = %v, want the output limit", err)
	}
}

func TestRunReportsAnExitWithItsStderr(t *testing.T) {
	_, err := Run(context.Background(), Command{Path: "/bin/sh", Args: []string{"-c", "echo broken >&2; exit 4"}}, testLimits)
	if err == nil || err.Error() != "process exited with code 4:\nbroken" {
		t.Fatalf("err = %v", err)
	}
}

// TestChildRunsAsTheCredential: with --run-as, a child has the agent's
// rights, not root's, even when this binary lies where that user could
// not reach it (the test binary's directory is root's, 0700).
func TestChildRunsAsTheCredential(t *testing.T) {
	proctest.RequireRoot(t)
	lim := testLimits
	lim.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	out, err := Call(context.Background(), Executable(), "whoami", lim, nil)
	if err != nil || string(out) != "65534:65534" {
		t.Fatalf("out %q, err %v", out, err)
	}
	out, err = Call(context.Background(), Executable(), "whoami", testLimits, nil)
	if err != nil || string(out) != "0:0" {
		t.Fatalf("without a credential: out %q, err %v", out, err)
	}
}

// TestChildOfAnotherUserIsCapped: a child with a credential caps its own
// address space (sandboxd may lack CAP_SYS_RESOURCE to cap another
// user's process), and another program reaches it through the
// trampoline, capped and as that user.
func TestChildOfAnotherUserIsCapped(t *testing.T) {
	proctest.RequireRoot(t)
	lim := testLimits
	lim.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	_, err := Call(context.Background(), Executable(), "hog", lim, nil)
	if !(raceEnabled && err != nil && (strings.Contains(err.Error(), "ThreadSanitizer") || strings.Contains(err.Error(), "-race mode"))) &&
		(!errors.Is(err, ErrMemory) || err.Error() != "memory limit reached (2048 MiB)") {
		t.Errorf("hog: err = %v, want the memory limit", err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), Command{Path: sh, Args: []string{"-c", `echo "$(id -u) $(ulimit -v) ${SANDBOXD_CHILD-unset}"`},
		Env: []string{"PATH=/usr/bin:/bin"}}, lim)
	if want := "65534 2097152 unset\n"; err != nil || string(out.Stdout) != want {
		t.Fatalf("sh: out %q (stderr %q), err %v; want %q", out.Stdout, out.Stderr, err, want)
	}
}
