package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// A freeze is a way an agent's command, running as sandboxd's user,
// stops the process sandboxd waits for: under a supervisor, the
// supervisor (the command's parent, in the command's group); in a cgroup,
// the command itself. Each spelling passes the denylist.
type freeze struct {
	name   string
	script string // run by sh with the marker as $0, the target as $T
}

var (
	stopParent = freeze{"SIGSTOP of the parent", `p=$T; kill -STOP $p`}
	stopGroup  = freeze{"SIGSTOP of the group", `kill -STOP 0`}
	traceIt    = freeze{"ptrace", `python3 "$PWD/tracer.py" "$T" "$0.traced" "$0" &`}
)

// frozenScript is the Bash command for f: it records its PID and its
// parent's in MARKER.pids, leaves two sleeps behind (one outside its
// group), freezes, and sleeps on, each process carrying the marker.
func frozenScript(marker string, f freeze, supervised bool) string {
	target := `$$`
	if supervised {
		target = `$PPID`
	}
	script := `T=` + target + `; echo $$ $PPID > "$0.pids"; setsid sleep 300 "$0" & sleep 300 "$0" &` +
		"\n" + f.script + "\n" + `exec sleep 300 "$0"`
	return "sh -c '" + strings.ReplaceAll(script, "'", `'\''`) + "' " + marker
}

// frozenDaemon is a sandboxd whose shells run under one containment.
type frozenDaemon struct {
	*started
	dir        string
	supervised bool
}

// startFrozen starts sandboxd with its shells contained as c, and the
// tracer in its workspace.
func startFrozen(t *testing.T, c shell.Containment, args ...string) *frozenDaemon {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tracer.py"), []byte(proctest.Tracer), 0o644); err != nil {
		t.Fatal(err)
	}
	// The agent runs as sandboxd's user, as in the container: as root
	// with no --run-as it would be another user, who cannot stop the
	// supervisor at all.
	s := startHTTPEnv(t, []string{shell.ContainmentEnv + "=" + string(c)}, append([]string{"--workspace", dir, "--run-as", "root"}, args...)...)
	return &frozenDaemon{started: s, dir: dir, supervised: c == shell.ContainSupervisor}
}

// frozen waits until the call marked marker has frozen its target, and
// returns the target, which is SIGKILLed at cleanup should it survive.
func (d *frozenDaemon) frozen(t *testing.T, marker string) proctest.ID {
	t.Helper()
	pids := proctest.ReadPIDsWithin(t, filepath.Join(d.dir, marker+".pids"), 2, 30*time.Second)
	target := pids[0]
	if d.supervised {
		target = pids[1]
	}
	id := proctest.Identify(t, target)[0]
	proctest.WaitStopped(t, target)
	return id
}

// assertNothingLeft fails unless every process of the calls marked, and
// every target, is gone.
func assertNothingLeft(t *testing.T, markers []string, targets []proctest.ID) {
	t.Helper()
	for _, m := range markers {
		sandboxtest.AssertNoProcs(t, m, 5*time.Second)
	}
	proctest.AssertGone(t, targets...)
}

// The agent freezes what sandboxd waits for — its supervisor, with
// SIGSTOP or a ptrace attach, or its whole process group — and sleeps
// on. Still, the timeout answers on time, KillShell returns, the end
// of the session and SIGTERM of sandboxd end it, and nothing of the
// call is left: sandboxd kills the tree itself, asking nothing of a
// process the agent can stop. Under a supervisor and in a cgroup.
func TestFrozenCallsEnd(t *testing.T) {
	modes := []struct {
		c       shell.Containment
		freezes []freeze
	}{
		{shell.ContainSupervisor, []freeze{stopParent, stopGroup, traceIt}},
		// In a cgroup the command's parent is sandboxd, which an agent of
		// its user can stop like any of its processes: out of reach.
		{shell.ContainCgroup, []freeze{stopGroup, traceIt}},
	}
	for _, m := range modes {
		if why := proctest.PtraceRefused(); why != "" {
			t.Logf("no ptrace case: %s", why)
			m.freezes = slices.DeleteFunc(m.freezes, func(f freeze) bool { return f == traceIt })
		}
		t.Run(string(m.c), func(t *testing.T) {
			if m.c == shell.ContainCgroup {
				requireCgroup(t)
			}
			t.Run("timeout", func(t *testing.T) { testFrozenTimeout(t, m.c, m.freezes) })
			t.Run("KillShell", func(t *testing.T) { testFrozenKillShell(t, m.c, m.freezes) })
			t.Run("session end", func(t *testing.T) { testFrozenSessionEnd(t, m.c, m.freezes) })
			t.Run("SIGTERM", func(t *testing.T) { testFrozenShutdown(t, m.c, m.freezes) })
		})
	}
}

func testFrozenTimeout(t *testing.T, c shell.Containment, freezes []freeze) {
	d := startFrozen(t, c)
	cs := d.connect(t)
	type answer struct {
		text string
		took time.Duration
		err  error
	}
	markers := make([]string, len(freezes))
	answers := make([]chan answer, len(freezes))
	for i, f := range freezes {
		markers[i], answers[i] = sandboxtest.NewMarker(), make(chan answer, 1)
		go func() {
			start := time.Now()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
				"command": frozenScript(markers[i], f, d.supervised), "timeout": 3000}})
			a := answer{took: time.Since(start), err: err}
			if err == nil {
				a.text = textOf(res)
			}
			answers[i] <- a
		}()
	}
	var targets []proctest.ID
	for _, m := range markers {
		targets = append(targets, d.frozen(t, m))
	}
	for i, f := range freezes {
		select {
		case a := <-answers[i]:
			if a.err != nil || !strings.Contains(a.text, "Command timed out after 3s") {
				t.Errorf("%s: Bash answered %q, %v; want a timeout", f.name, a.text, a.err)
			}
			// The 3 s, the kill grace, and a loaded machine's delays.
			if a.took > 8*time.Second {
				t.Errorf("%s: the 3 s timeout answered after %v", f.name, a.took)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s: no answer 30 s after a 3 s timeout", f.name)
		}
	}
	assertNothingLeft(t, markers, targets)
}

// startFrozenShells starts each freeze as a background shell and returns
// the shells' IDs, their markers and targets, once all are frozen.
func startFrozenShells(t *testing.T, d *frozenDaemon, cs *mcp.ClientSession, freezes []freeze) (ids, markers []string, targets []proctest.ID) {
	t.Helper()
	for _, f := range freezes {
		m := sandboxtest.NewMarker()
		out := callTool(t, cs, "Bash", map[string]any{"command": frozenScript(m, f, d.supervised), "run_in_background": true})
		ids = append(ids, strings.TrimPrefix(out, "Started background shell "))
		markers = append(markers, m)
	}
	for _, m := range markers {
		targets = append(targets, d.frozen(t, m))
	}
	return ids, markers, targets
}

func testFrozenKillShell(t *testing.T, c shell.Containment, freezes []freeze) {
	d := startFrozen(t, c)
	cs := d.connect(t)
	ids, markers, targets := startFrozenShells(t, d, cs, freezes)
	for i, id := range ids {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "KillShell", Arguments: map[string]any{"shell_id": id}})
		cancel()
		if err != nil {
			t.Fatalf("%s: KillShell: %v after %v", freezes[i].name, err, time.Since(start))
		}
		if got, want := textOf(res), "Killed background shell "+id; got != want {
			t.Errorf("%s: KillShell answered %q, want %q", freezes[i].name, got, want)
		}
		// The kill grace, and a loaded machine's delays.
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: KillShell took %v", freezes[i].name, took)
		}
	}
	assertNothingLeft(t, markers, targets)
}

func testFrozenSessionEnd(t *testing.T, c shell.Containment, freezes []freeze) {
	d := startFrozen(t, c)
	cs := d.connect(t)
	_, markers, targets := startFrozenShells(t, d, cs, freezes)
	if err := cs.Close(); err != nil {
		t.Fatalf("close the session: %v", err)
	}
	assertNothingLeft(t, markers, targets)
}

func testFrozenShutdown(t *testing.T, c shell.Containment, freezes []freeze) {
	d := startFrozen(t, c, "--shutdown-grace", "1s")
	cs := d.connect(t)
	_, markers, targets := startFrozenShells(t, d, cs, freezes)
	fg := sandboxtest.NewMarker()
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
			"command": frozenScript(fg, freezes[0], d.supervised), "timeout": 600000}})
	}()
	markers, targets = append(markers, fg), append(targets, d.frozen(t, fg))

	exited := make(chan error, 1)
	go func() { exited <- d.cmd.Wait() }()
	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("sandboxd exited: %v", err)
		}
		// The 1 s grace, the kill grace, and a loaded machine's delays.
		if took := time.Since(start); took > 8*time.Second {
			t.Errorf("shutdown took %v with a 1 s grace", took)
		}
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		<-exited
		t.Errorf("sandboxd still running 30 s after SIGTERM with a 1 s grace: SIGKILLed")
	}
	assertNothingLeft(t, markers, targets)
}

// requireCgroup skips the test where sandboxd could not run a call in
// a cgroup of its own, saying why, unless it is CI, which must have it.
func requireCgroup(t *testing.T) {
	t.Helper()
	d := startFrozen(t, shell.ContainCgroup)
	cs := d.connect(t)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo ok"}})
	if err != nil {
		t.Fatal(err)
	}
	got := textOf(res)
	switch {
	case !res.IsError && strings.TrimSpace(got) == "ok":
	default:
		ci.Skipf(t, "no cgroup for a call here: Bash answered %q", got)
	}
}
