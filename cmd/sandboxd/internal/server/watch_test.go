package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/watch"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

var shellID = regexp.MustCompile(`bash_[0-9a-f]+`)

// startWatch calls watch_process and returns the new shell's ID.
func startWatch(t *testing.T, cs *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	got := ok(t, cs, "watch_process", args)
	id := shellID.FindString(got)
	if !strings.HasPrefix(got, "Started watched process ") || id == "" {
		t.Fatalf("watch_process(%v) = %q", args, got)
	}
	return id
}

// events calls watch_process_events and decodes its answer.
func events(t *testing.T, cs *mcp.ClientSession, id string, since int64) eventsAnswer {
	t.Helper()
	var a eventsAnswer
	text := ok(t, cs, "watch_process_events", map[string]any{"shell_id": id, "since_event_id": since})
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("watch_process_events: %v in %q", err, text)
	}
	return a
}

// awaitEvent polls every few milliseconds for an event of kind after
// since, and returns it with when the client got it.
func awaitEvent(t *testing.T, cs *mcp.ClientSession, id string, since int64, kind watch.Kind, within time.Duration) (watch.Event, time.Time) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		a := events(t, cs, id, since)
		got := time.Now()
		for _, e := range a.Events {
			if e.Kind == kind {
				return e, got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event within %v: %+v", kind, within, a)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWatchProcessServer: a watched dev server's error line reaches the
// agent as an event within 200 ms of being written; BashOutput reads its
// output; KillShell takes down its whole tree and the exit event follows;
// the events stay readable after BashOutput has forgotten the shell.
func TestWatchProcessServer(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	if err := os.CopyFS(d.dir, os.DirFS("testdata/watch")); err != nil {
		t.Fatal(err)
	}
	cs := d.connect(t, streamable)
	id := startWatch(t, cs, map[string]any{"command": "./logserver.sh trigger", "error_patterns": []string{`^panic:`, `\bERROR\b`}, "description": "dev server"})
	grandchild := pidIn(t, filepath.Join(d.dir, "grandchild.pid"))
	if a := events(t, cs, id, 0); a.Status != "running" || len(a.Events) != 0 || a.Exited || a.ShellID != id {
		t.Fatalf("before the error: %+v", a)
	}

	if err := os.WriteFile(filepath.Join(d.dir, "trigger"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e, seen := awaitEvent(t, cs, id, 0, watch.KindMatch, 20*time.Second)
	m := regexp.MustCompile(`^ERROR request failed at (\d+)$`).FindStringSubmatch(e.Line)
	if m == nil || e.Stream != "stderr" || e.LineNumber != 1 || e.Pattern != `\bERROR\b` || e.Truncated || e.ID != 1 {
		t.Fatalf("match event %+v", e)
	}
	ns, _ := strconv.ParseInt(m[1], 10, 64)
	written := time.Unix(0, ns)
	t.Logf("error line written %s; event recorded %v later, seen by the client %v later", written.Format(time.RFC3339Nano), e.Time.Sub(written), seen.Sub(written))
	if lag := seen.Sub(written); lag > 200*time.Millisecond {
		t.Errorf("the client saw the error event %v after the line was written, want at most 200ms", lag)
	}

	out := ok(t, cs, "BashOutput", map[string]any{"bash_id": id})
	if !strings.Contains(out, "listening on 127.0.0.1:8080") || !strings.Contains(out, "ERROR request failed") || !strings.Contains(out, "Status: running") {
		t.Errorf("BashOutput of a watched process: %q", out)
	}

	if got := ok(t, cs, "KillShell", map[string]any{"shell_id": id}); got != "Killed background shell "+id {
		t.Errorf("KillShell = %q", got)
	}
	proctest.Gone(t, "a killed watched process's grandchild", grandchild)
	exit, _ := awaitEvent(t, cs, id, e.ID, watch.KindExit, 5*time.Second)
	if exit.ExitCode == nil || *exit.ExitCode != -1 || exit.Status != "killed" || exit.ID != 2 {
		t.Errorf("exit event %+v", exit)
	}
	if out := ok(t, cs, "BashOutput", map[string]any{"bash_id": id}); !strings.Contains(out, "Status: killed") {
		t.Errorf("final BashOutput %q", out)
	}
	// BashOutput has forgotten the shell; its events remain.
	a := events(t, cs, id, 1)
	if len(a.Events) != 1 || a.Events[0].Kind != watch.KindExit || !a.Exited || a.LastEventID != 2 || a.Status != "killed" {
		t.Errorf("events after BashOutput forgot the shell: %+v", a)
	}
	if a := events(t, cs, id, 2); len(a.Events) != 0 || a.Dropped != 0 {
		t.Errorf("events after the last: %+v", a)
	}
}

// TestWatchProcessIdle: a process that never prints gets an idle event,
// once per silence; one that prints and falls silent gets one after.
func TestWatchProcessIdle(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	start := time.Now()
	id := startWatch(t, cs, map[string]any{"command": "sleep 300", "idle_timeout": 200})
	e, _ := awaitEvent(t, cs, id, 0, watch.KindIdle, 10*time.Second)
	if took := time.Since(start); took < 200*time.Millisecond || e.SilentMS < 200 {
		t.Errorf("idle after %v, event %+v", took, e)
	}
	time.Sleep(600 * time.Millisecond)
	if a := events(t, cs, id, 0); len(a.Events) != 1 {
		t.Errorf("a silent process idled more than once per silence: %+v", a)
	}
	ok(t, cs, "KillShell", map[string]any{"shell_id": id})

	id = startWatch(t, cs, map[string]any{"command": "echo hi; sleep 0.5; echo again; exec sleep 300", "idle_timeout": 200})
	second, _ := awaitEvent(t, cs, id, 0, watch.KindIdle, 10*time.Second)
	_, _ = awaitEvent(t, cs, id, second.ID, watch.KindIdle, 10*time.Second)
	ok(t, cs, "KillShell", map[string]any{"shell_id": id})
}

// TestWatchProcessLongLine: a 1 MiB line is cut at the cap and matched
// at once, and the lines after it are matched as usual.
func TestWatchProcessLongLine(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	id := startWatch(t, cs, map[string]any{
		"command":        "printf 'ERROR '; head -c 1048576 /dev/zero | tr '\\0' x; echo; echo fine; echo 'ERROR after the long line' >&2; echo 'ERROR on stdout'; exec sleep 300",
		"error_patterns": []string{"ERROR"},
	})
	deadline := time.Now().Add(20 * time.Second)
	var a eventsAnswer
	for len(a.Events) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		a = events(t, cs, id, 0)
	}
	if len(a.Events) != 3 {
		t.Fatalf("events %+v", a)
	}
	// The streams are read apart, so their events may come in any order.
	var long, after, out watch.Event
	for _, e := range a.Events {
		switch {
		case e.Truncated:
			long = e
		case e.Stream == "stderr":
			after = e
		default:
			out = e
		}
	}
	if long.Stream != "stdout" || long.LineNumber != 1 || !long.Truncated || long.Line != "ERROR "+strings.Repeat("x", watch.DefaultMaxLine-6) {
		t.Errorf("long line event: stream %s line %d truncated %v, %d bytes", long.Stream, long.LineNumber, long.Truncated, len(long.Line))
	}
	if after.Line != "ERROR after the long line" || after.LineNumber != 1 || after.Truncated {
		t.Errorf("stderr event after the long line %+v", after)
	}
	if out.Line != "ERROR on stdout" || out.LineNumber != 3 || out.Truncated {
		t.Errorf("stdout event after the long line %+v", out)
	}
	ok(t, cs, "KillShell", map[string]any{"shell_id": id})
}

// TestWatchProcessRefusals: bad arguments, the denylist and the cap on
// watched processes are clear errors; plain shells have no events.
func TestWatchProcessRefusals(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "sudo id"}, "refused"},
		{map[string]any{"command": "true", "error_patterns": []string{"ok", "("}}, "error_patterns[1]: error parsing regexp"},
		{map[string]any{"command": "true", "error_patterns": []string{strings.Repeat("a", watch.MaxPatternLen+1)}}, "at most 512 are allowed"},
		{map[string]any{"command": "true", "error_patterns": make([]string, watch.MaxPatterns+1)}, "at most 32 are allowed"},
		{map[string]any{"command": "true", "error_patterns": "ERROR"}, "want an array"},
		{map[string]any{"command": "true", "idle_timeout": -1}, "want milliseconds from 0 to 3600000"},
	} {
		if got := fails(t, cs, "watch_process", tc.args); !strings.Contains(got, tc.want) {
			t.Errorf("watch_process(%v) = %q, want %q in it", tc.args, got, tc.want)
		}
	}
	plain := shellID.FindString(ok(t, cs, "Bash", map[string]any{"command": "sleep 300", "run_in_background": true}))
	if got := fails(t, cs, "watch_process_events", map[string]any{"shell_id": plain}); !strings.Contains(got, "not a watched process") {
		t.Errorf("events of a plain shell: %q", got)
	}
	ok(t, cs, "KillShell", map[string]any{"shell_id": plain})
	if got := fails(t, cs, "watch_process_events", map[string]any{"shell_id": "bash_00000000"}); !strings.Contains(got, "no background shell") {
		t.Errorf("events of an unknown shell: %q", got)
	}

	var ids []string
	for range 8 {
		ids = append(ids, startWatch(t, cs, map[string]any{"command": "exec sleep 300"}))
	}
	got := fails(t, cs, "watch_process", map[string]any{"command": "exec sleep 300"})
	if !strings.Contains(got, "8 watched processes are running, the maximum") || !strings.Contains(got, ids[0]) {
		t.Errorf("ninth watched process: %q", got)
	}
	for _, id := range ids {
		ok(t, cs, "KillShell", map[string]any{"shell_id": id})
	}
	if got := fails(t, cs, "watch_process_events", map[string]any{"shell_id": ids[0], "since_event_id": 1.5}); !strings.Contains(got, "whole number") {
		t.Errorf("fractional since_event_id: %q", got)
	}
}

// TestWatchEventsBelongToTheirSession: another session cannot read a
// watched process's events nor learn it exists.
func TestWatchEventsBelongToTheirSession(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	cs, other := d.connect(t, streamable), d.connect(t, streamable)
	id := startWatch(t, cs, map[string]any{"command": "exec sleep 300"})
	if got := fails(t, other, "watch_process_events", map[string]any{"shell_id": id}); got != fmt.Sprintf("watch events: no background shell with ID %q (there are none)", id) {
		t.Errorf("another session's events: %q", got)
	}
	ok(t, cs, "KillShell", map[string]any{"shell_id": id})
}
