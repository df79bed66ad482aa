package shells

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
)

const prefix = "Started background shell "

func startBG(t *testing.T, m *Manager, command string) string {
	t.Helper()
	out := bash(t, m, Command{Command: command, Background: true})
	id, ok := strings.CutPrefix(out, prefix)
	if !ok || len(id) != len("bash_12345678") {
		t.Fatalf("got %q", out)
	}
	return id
}

func output(t *testing.T, m *Manager, id, filter string) string {
	t.Helper()
	out, err := m.Output("", id, filter)
	if err != nil {
		t.Fatalf("Output(%s, %q): %v", id, filter, err)
	}
	return out
}

// waitDone waits for shell id to end without reading its output.
func waitDone(t *testing.T, m *Manager, id string) {
	t.Helper()
	m.mu.Lock()
	sh := m.shells[id]
	m.mu.Unlock()
	if sh == nil {
		t.Fatalf("no shell %s", id)
	}
	select {
	case <-sh.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("shell %s did not end", id)
	}
}

func shellPID(t *testing.T, m *Manager, id string) int {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shells[id].proc.Pid()
}

const gate = `while [ ! -e go ]; do sleep 0.01; done`

func TestBackgroundOutputIsIncremental(t *testing.T) {
	m := newManager(t, Options{})
	began := time.Now()
	id := startBG(t, m, "echo one; "+gate+"; echo two")
	if el := time.Since(began); el > time.Second {
		t.Errorf("starting took %s", el)
	}
	got := output(t, m, id, "")
	for got == "Status: running\n(no new output)" {
		time.Sleep(10 * time.Millisecond)
		got = output(t, m, id, "")
	}
	if want := "Status: running\n--- stdout ---\none"; got != want {
		t.Errorf("first read: got %q, want %q", got, want)
	}
	touch(t, inDir(m, "go"))
	waitDone(t, m, id)
	if got, want := output(t, m, id, ""), "Status: exited with code 0\n--- stdout ---\ntwo"; got != want {
		t.Errorf("second read: got %q, want %q", got, want)
	}
	// Read in full: forgotten, but its status is still known.
	if got, want := output(t, m, id, ""), "Status: exited with code 0\n(no new output)"; got != want {
		t.Errorf("third read: got %q, want %q", got, want)
	}
	if got, _ := m.Kill("", id); got != "Background shell "+id+" is not running (status: exited with code 0)" {
		t.Errorf("kill after exit: got %q", got)
	}
}

func TestBackgroundStdoutAndStderrApart(t *testing.T) {
	m := newManager(t, Options{})
	id := startBG(t, m, "echo out; echo err >&2; printf partial; exit 3")
	waitDone(t, m, id)
	want := "Status: exited with code 3\n--- stdout ---\nout\npartial\n--- stderr ---\nerr"
	if got := output(t, m, id, ""); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBackgroundFilter(t *testing.T) {
	m := newManager(t, Options{})
	id := startBG(t, m, `printf 'apple\nbanana\napricot\n'; echo grape >&2; touch printed; `+gate+`; echo after`)
	proctest.WaitFile(t, inDir(m, "printed"))

	if _, err := m.Output("", id, "("); err == nil || !strings.HasPrefix(err.Error(), "bash output: invalid filter: ") {
		t.Errorf("bad filter: got %v", err)
	}
	// Lines may reach the buffer a little after the file; a bad filter
	// consumed nothing, so keep reading until all four lines are seen.
	var got strings.Builder
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(got.String(), "apricot") || !strings.Contains(got.String(), "grape") {
		if time.Now().After(deadline) {
			t.Fatalf("filtered reads: %q", got.String())
		}
		out := output(t, m, id, "^ap|gr")
		if out != "Status: running\n(no new output)" {
			got.WriteString(out + "|")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := "Status: running\n--- stdout ---\napple\napricot\n--- stderr ---\ngrape|"; got.String() != want {
		t.Errorf("filtered: got %q, want %q", got.String(), want)
	}
	touch(t, inDir(m, "go"))
	waitDone(t, m, id)
	// banana was consumed by the filtered read.
	if got, want := output(t, m, id, "nomatch"), "Status: exited with code 0\n(no new output matched the filter)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBackgroundSecretSplitAcrossWrites(t *testing.T) {
	m := newManager(t, Options{Scrubber: scrub.New(map[string]string{"X": "s3cr3t-value-123"})})
	id := startBG(t, m, `printf 'key=s3cr3t-'; touch half; `+gate+`; printf 'value-123 end\nlast s3cr3t-'; sleep 0.1; printf 'value-123'`)
	proctest.WaitFile(t, inDir(m, "half"))
	time.Sleep(100 * time.Millisecond) // let the first half reach the buffer
	if got, want := output(t, m, id, ""), "Status: running\n(no new output)"; got != want {
		t.Errorf("half a line was released: %q", got)
	}
	touch(t, inDir(m, "go"))
	waitDone(t, m, id)
	want := "Status: exited with code 0\n--- stdout ---\nkey=[REDACTED:secret:X] end\nlast [REDACTED:secret:X]"
	if got := output(t, m, id, ""); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBackgroundBufferDropsOldest(t *testing.T) {
	m := newManager(t, Options{MaxBuffered: 100})
	id := startBG(t, m, "seq 1 1000")
	waitDone(t, m, id)
	full := seq(1000)
	cut := len(full) - 100
	cut += strings.IndexByte(full[cut:], '\n') + 1 // kept text starts a line
	want := fmt.Sprintf("Status: exited with code 0\n--- stdout ---\n"+
		"[... %d earlier bytes dropped: more than 100 bytes were left unread ...]\n%s", cut, strings.TrimSuffix(full[cut:], "\n"))
	if got := output(t, m, id, ""); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBackgroundOutputIsCapped(t *testing.T) {
	m := newManager(t, Options{MaxOutput: 1000})
	id := startBG(t, m, "seq 1 10000")
	waitDone(t, m, id)
	full := seq(10000)
	want := "Status: exited with code 0\n--- stdout ---\n" + full[:500] +
		fmt.Sprintf("[... %d bytes elided ...]\n", len(full)-1000) + strings.TrimSuffix(full[len(full)-500:], "\n")
	if got := output(t, m, id, ""); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestKillStopsTheGroup(t *testing.T) {
	m := newManager(t, Options{})
	id := startBG(t, m, `sleep 60 & echo $! > pid; echo $$ >> pid; wait`)
	ids := proctest.Identify(t, proctest.ReadPIDs(t, inDir(m, "pid"), 2)...)
	got, err := m.Kill("", id)
	if err != nil || got != "Killed background shell "+id {
		t.Errorf("got %q, %v", got, err)
	}
	proctest.AssertGone(t, ids...)
	if got, want := output(t, m, id, ""), "Status: killed\n(no new output)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, err := m.Kill("", id); err != nil || got != "Background shell "+id+" is not running (status: killed)" {
		t.Errorf("second kill: got %q, %v", got, err)
	}
}

func TestMaxBackground(t *testing.T) {
	m := newManager(t, Options{MaxBackground: 2})
	a, b := startBG(t, m, "sleep 60"), startBG(t, m, "sleep 60")
	ids := proctest.Identify(t, shellPID(t, m, a), shellPID(t, m, b))
	_, err := m.Bash(context.Background(), Command{Command: "true", Background: true})
	if err == nil || !strings.HasPrefix(err.Error(), "bash: 2 background shells are running, the maximum") {
		t.Errorf("third shell: got %v", err)
	}
	if _, err := m.Kill("", a); err != nil {
		t.Fatal(err)
	}
	proctest.AssertGone(t, ids[:1]...)
	startBG(t, m, "true")
}

func TestFinishedShellsLeftUnreadAreDiscarded(t *testing.T) {
	m := newManager(t, Options{MaxBackground: 1})
	first := startBG(t, m, "echo one")
	waitDone(t, m, first)
	second := startBG(t, m, "echo two")
	waitDone(t, m, second)
	// watch evicts after done is closed; give it its moment.
	deadline := time.Now().Add(5 * time.Second)
	for {
		m.mu.Lock()
		_, kept := m.shells[first]
		m.mu.Unlock()
		if !kept || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	want := "Status: exited with code 0\n(its unread output was discarded: more than 1 finished shells were left unread)"
	if got := output(t, m, first, ""); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := output(t, m, second, ""), "Status: exited with code 0\n--- stdout ---\ntwo"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestUnknownShell(t *testing.T) {
	m := newManager(t, Options{})
	if _, err := m.Output("", "bash_nope", ""); err == nil || err.Error() != `bash output: no background shell with ID "bash_nope" (there are none)` {
		t.Errorf("got %v", err)
	}
	out := bash(t, m, Command{Command: "sleep 60", Background: true, Description: "nap"})
	id := strings.TrimPrefix(out, prefix)
	if _, err := m.Kill("", "bash_nope"); err == nil || err.Error() != `kill shell: no background shell with ID "bash_nope" (known: `+id+` (running: nap))` {
		t.Errorf("got %v", err)
	}
}

func TestCloseKillsEverything(t *testing.T) {
	m := newManager(t, Options{})
	startBG(t, m, `sleep 60 & echo $! >> bgpids; echo $$ >> bgpids; wait`)
	other := startBG(t, m, "sleep 60")
	fgErr := make(chan error, 1)
	go func() {
		_, err := m.Bash(context.Background(), Command{Command: `sleep 60 & echo $! >> fgpids; echo $$ >> fgpids; sleep 60`})
		fgErr <- err
	}()
	pids := append(proctest.ReadPIDs(t, inDir(m, "bgpids"), 2), proctest.ReadPIDs(t, inDir(m, "fgpids"), 2)...)
	ids := proctest.Identify(t, append(pids, shellPID(t, m, other))...)

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	proctest.AssertGone(t, ids...)
	if err := <-fgErr; err == nil || !strings.Contains(err.Error(), "shell manager is closing") {
		t.Errorf("foreground: got %v", err)
	}
	if _, err := m.Bash(context.Background(), Command{Command: "true"}); err != errClosed {
		t.Errorf("Bash after Close: got %v", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if got, want := output(t, m, other, ""), "Status: killed\n(no new output)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestShellsBelongToTheirOwner: another owner (MCP session) can neither
// read nor kill a shell, nor learn that it exists; Forget kills the
// owner's shells, their trees, and forgets them.
func TestShellsBelongToTheirOwner(t *testing.T) {
	m := newManager(t, Options{})
	out := bash(t, m, Command{Command: "sleep 60 & sleep 60", Background: true, Owner: "alice", Description: "nap"})
	id := strings.TrimPrefix(out, prefix)
	ids := proctest.Identify(t, shellPID(t, m, id))

	if _, err := m.Output("mallory", id, ""); err == nil || err.Error() != `bash output: no background shell with ID "`+id+`" (there are none)` {
		t.Errorf("Output by another owner: %v", err)
	}
	if _, err := m.Kill("mallory", id); err == nil || err.Error() != `kill shell: no background shell with ID "`+id+`" (there are none)` {
		t.Errorf("Kill by another owner: %v", err)
	}
	if m.Has("mallory", id) || !m.Has("alice", id) {
		t.Errorf("Has: mallory %v, alice %v", m.Has("mallory", id), m.Has("alice", id))
	}
	if got, err := m.Output("alice", id, ""); err != nil || got != "Status: running\n(no new output)" {
		t.Errorf("Output by its owner: %q, %v", got, err)
	}

	m.Forget("alice")
	proctest.AssertGone(t, ids...)
	if m.Has("alice", id) {
		t.Error("a forgotten owner's shell is still known")
	}
}

// TestBackgroundSecretSplitAt64KiB: a line longer than what is held back
// is released in pieces, and a token split where the first piece would
// end comes out whole in the second read, never half in the first.
// Issue 16, item 2.
func TestBackgroundSecretSplitAt64KiB(t *testing.T) {
	m := newManager(t, Options{Scrubber: scrub.New(nil)})
	token := "ghp_" + "EGQ80YRP10eougTfIhpazOc61hVRd82Wzj5O"
	head := 64<<10 - 10
	id := startBG(t, m, fmt.Sprintf(`yes 'lorem ipsum' | head -c %d | tr '\n' ' '; printf '%s'; touch half; `+gate+`; printf '%s end\n'`,
		head, token[:16], token[16:]))
	proctest.WaitFile(t, inDir(m, "half"))
	time.Sleep(100 * time.Millisecond) // let the first half reach the buffer
	first := output(t, m, id, "")
	touch(t, inDir(m, "go"))
	waitDone(t, m, id)
	second := output(t, m, id, "")
	for i := 0; i+8 <= len(token); i++ {
		if strings.Contains(first, token[i:i+8]) || strings.Contains(second, token[i:i+8]) {
			t.Fatalf("%q of the token came out", token[i:i+8])
		}
	}
	if !strings.Contains(second, "[REDACTED:github-token] end") {
		t.Fatalf("the token is not redacted whole: %q", second[max(0, len(second)-200):])
	}
}
