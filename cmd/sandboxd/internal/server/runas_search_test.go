package server

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// agentUID is the unprivileged user these tests give --run-as (nobody).
const agentUID = 65534

// swapRace is a workspace served with --run-as, whose directory "sub" a
// goroutine keeps swapping, atomically, with a symlink to a directory
// only root may read, as an agent's command would. The root-only
// directory holds files named as sub's are, so a path checked in one is
// used in the other, and a file and a symbol whose names and content
// hold the canary.
type swapRace struct {
	ws     string
	canary string // 16 hex digits, in every name and line the agent may not see
	stop   chan struct{}
	done   sync.WaitGroup
	swaps  int
}

func newSwapRace(t *testing.T) *swapRace {
	t.Helper()
	proctest.RequireRoot(t)
	base := proctest.OpenTempDir(t, "sandboxd-swap-")
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	r := &swapRace{ws: filepath.Join(base, "ws"), canary: hex.EncodeToString(b), stop: make(chan struct{})}

	secret := filepath.Join(t.TempDir(), "secret")
	mustDo(t, os.Mkdir(secret, 0o700))
	for name, content := range map[string]string{
		"lib.go":                     "package sub\n\n// CANARY_" + r.canary + "\nfunc Canary" + r.canary + "() {}\n",
		"canary_" + r.canary + ".go": "package sub\n\nfunc Canary" + r.canary + "Two() {}\n",
		"canary_" + r.canary + ".py": "def canary_" + r.canary + "():\n    pass\n",
		"notes_" + r.canary + ".txt": "CANARY_" + r.canary + "\n",
	} {
		mustDo(t, os.WriteFile(filepath.Join(secret, name), []byte(content), 0o600))
	}

	sub := filepath.Join(r.ws, "sub")
	mustDo(t, os.MkdirAll(sub, 0o755))
	mustDo(t, os.WriteFile(filepath.Join(sub, "lib.go"), []byte("package sub\n\n// nothing secret on this line\nfunc Harmless() {}\n\n// more lines than the canary's file\n"), 0o644))
	// A file at the top, so the index watches the directory where the
	// swap happens and lists sub and alt again after each.
	mustDo(t, os.WriteFile(filepath.Join(r.ws, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	mustDo(t, os.Symlink(secret, filepath.Join(r.ws, "alt")))
	for _, p := range []string{r.ws, sub, filepath.Join(sub, "lib.go"), filepath.Join(r.ws, "main.go"), filepath.Join(r.ws, "alt")} {
		mustDo(t, os.Lchown(p, agentUID, agentUID))
	}
	return r
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// config is a Config serving the race's workspace as the agent's user.
func (r *swapRace) config() Config {
	return Config{
		Workspaces: []Workspace{{Dir: r.ws}},
		RunAs:      &syscall.Credential{Uid: agentUID, Gid: agentUID, Groups: []uint32{}},
	}
}

// start swaps sub and alt until the test ends: one renameat2 exchange
// after another, so sub is the real directory half the time and the
// symlink to the root-only one the other half.
func (r *swapRace) start(t *testing.T) {
	t.Helper()
	sub, alt := filepath.Join(r.ws, "sub"), filepath.Join(r.ws, "alt")
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		for {
			select {
			case <-r.stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("swap: %v", err)
				return
			}
			r.swaps++
		}
	}()
	t.Cleanup(r.halt)
}

// halt stops the swapping and leaves sub the real directory.
func (r *swapRace) halt() {
	select {
	case <-r.stop:
		return
	default:
	}
	close(r.stop)
	r.done.Wait()
	if fi, err := os.Lstat(filepath.Join(r.ws, "sub")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		_ = unix.Renameat2(unix.AT_FDCWD, filepath.Join(r.ws, "sub"), unix.AT_FDCWD, filepath.Join(r.ws, "alt"), unix.RENAME_EXCHANGE)
	}
}

// raceBudget bounds each tool's calls in the race, on a loaded machine;
// a quiet one makes them all in a few seconds. Before rg and ctags ran as
// the agent's user the canary came back within 15 calls of each tool.
const (
	raceBudget   = 10 * time.Second
	minRaceCalls = 60
)

// raceCalls is how many calls hammer makes of a tool and how many of
// them must run: n and minRaceCalls, or under -short 40 and 30, still
// twice the calls that once found the canary.
func raceCalls(n int) (calls, least int) {
	if testing.Short() {
		return 40, 30
	}
	return n, minRaceCalls
}

// hammer calls a tool up to n times (fewer under -short, see raceCalls)
// or for budget while the swap runs, and fails on any answer that holds
// the canary. It logs how many answers were errors or named sub/, to show
// the race was on.
func (r *swapRace) hammer(t *testing.T, d *daemon, tool string, n int, budget time.Duration, args func(i int) map[string]any) {
	t.Helper()
	cs := d.connect(t, streamable)
	r.start(t)
	defer r.halt()
	n, least := raceCalls(n)
	deadline := time.Now().Add(budget)
	calls, errs, sawSub := 0, 0, 0
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		a := args(i)
		res := call(t, cs, tool, a)
		calls++
		if res.IsError {
			errs++
		}
		if strings.Contains(res.Text, "sub/") {
			sawSub++
		}
		if strings.Contains(res.Text, r.canary) {
			t.Fatalf("call %d, %s(%v) answered what only root may read:\n%s", i, tool, a, res.Text)
		}
	}
	r.halt()
	t.Logf("%s: %d calls, %d swaps, %d errors, %d answers naming sub/", tool, calls, r.swaps, errs, sawSub)
	if calls < least {
		t.Errorf("only %d of %d calls ran within %s: the race was hardly tried", calls, n, budget)
	}
}

// TestGrepRunAsSwapRace: with --run-as, Grep never returns a root-only
// file's lines or names, though the agent swaps a directory for a
// symlink to one while it searches (rg runs as the agent's user).
func TestGrepRunAsSwapRace(t *testing.T) {
	r := newSwapRace(t)
	d := startDaemon(t, r.config())
	cs := d.connect(t, streamable)
	want := filepath.Join(r.ws, "sub", "lib.go") + ":4:func Harmless() {}"
	if got := ok(t, cs, "Grep", map[string]any{"pattern": "Harmless", "output_mode": "content"}); got != want {
		t.Fatalf("Grep before the race: %q, want %q", got, want)
	}
	modes := []string{"content", "files_with_matches", "count"}
	r.hammer(t, d, "Grep", 300, raceBudget, func(i int) map[string]any {
		a := map[string]any{"pattern": "CANARY_[0-9a-f]{16}|Canary[0-9a-f]{16}", "output_mode": modes[i%3]}
		if i%2 == 0 {
			a["path"] = "sub"
		}
		return a
	})
}

// TestGlobRunAsSwapRace: with --run-as, Glob never lists a root-only
// directory's file names through the same swap.
func TestGlobRunAsSwapRace(t *testing.T) {
	r := newSwapRace(t)
	d := startDaemon(t, r.config())
	cs := d.connect(t, streamable)
	if got, want := ok(t, cs, "Glob", map[string]any{"pattern": "sub/*.go"}), filepath.Join(r.ws, "sub", "lib.go"); got != want {
		t.Fatalf("Glob before the race: %q, want %q", got, want)
	}
	patterns := []string{"**/*", "**/*.go", "*", "**/canary*"}
	r.hammer(t, d, "Glob", 300, raceBudget, func(i int) map[string]any {
		a := map[string]any{"pattern": patterns[i%len(patterns)]}
		if i%2 == 0 {
			a["path"] = "sub"
		}
		return a
	})
}

// TestSearchCodeRunAsSwapRace: with --run-as, search_code never indexes
// a root-only file's symbols through the same swap (ctags runs as the
// agent's user), and once the race is over the index holds none.
func TestSearchCodeRunAsSwapRace(t *testing.T) {
	needCtags(t)
	r := newSwapRace(t)
	d := startDaemon(t, r.config())
	cs := d.connect(t, streamable)
	if got, want := ok(t, cs, "search_code", map[string]any{"query": "Harmless"}), "sub/lib.go:4: function sub.Harmless()\n(1 match)"; got != want {
		t.Fatalf("search_code before the race: %q, want %q", got, want)
	}
	r.hammer(t, d, "search_code", 200, raceBudget, func(int) map[string]any {
		return map[string]any{"query": "canary", "limit": 50}
	})
	if got, want := ok(t, cs, "search_code", map[string]any{"query": "canary"}), `No symbols match "canary"`; got != want {
		t.Errorf("after the race: %q, want %q", got, want)
	}
}

// TestSearchHelpersGetNoSecrets: rg and ctags get the environment the
// agent's commands get, not sandboxd's own: a process of their user can
// read theirs in /proc/PID/environ, and sandboxd's holds values the
// commands must not see (the OTLP exporter's headers, say).
func TestSearchHelpersGetNoSecrets(t *testing.T) {
	needCtags(t)
	const name, value = "SEARCH_HELPER_API_TOKEN", "helper-secret-value-0123456789abcdef"
	t.Setenv(name, value)
	bin, out := t.TempDir(), t.TempDir()
	for _, tool := range []string{"rg", "ctags"} {
		real, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\nenv > " + filepath.Join(out, tool) + "\nexec " + real + " \"$@\"\n"
		mustDo(t, os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755))
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	dir := t.TempDir()
	mustDo(t, os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc Helper() {}\n"), 0o644))
	d := startDaemon(t, Config{
		Workspaces: []Workspace{{Dir: dir}},
		Secrets:    map[string]string{name: value},
		Env:        []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, name + "=" + value},
	})
	cs := d.connect(t, streamable)
	if got, want := ok(t, cs, "Grep", map[string]any{"pattern": "Helper"}), filepath.Join(dir, "a.go"); got != want {
		t.Errorf("Grep: %q, want %q", got, want)
	}
	if got, want := ok(t, cs, "search_code", map[string]any{"query": "Helper"}), "a.go:3: function a.Helper()\n(1 match)"; got != want {
		t.Errorf("search_code: %q, want %q", got, want)
	}
	for _, tool := range []string{"rg", "ctags"} {
		b, err := os.ReadFile(filepath.Join(out, tool))
		if err != nil {
			t.Fatalf("%s did not run: %v", tool, err)
		}
		if env := string(b); strings.Contains(env, value) || strings.Contains(env, name) || !strings.Contains(env, "HOME="+dir+"\n") {
			t.Errorf("%s's environment:\n%s\nwant HOME=%s and no %s", tool, env, dir, name)
		}
	}
}
