package dockerbox

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/tether"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// tetherProbe prints the command's parent's first two arguments (the
// tether's path and flag, when it runs under one), then its stdin, and
// writes to stderr.
var tetherProbe = sandbox.Request{
	Command: "/bin/sh",
	Args:    []string{"-c", `tr '\0' '\n' </proc/$PPID/cmdline | head -n 2; cat; echo e >&2; exit 3`},
	Stdin:   []byte("in\n"),
}

// probeAnswer checks what tetherProbe answered and returns the parent's
// arguments it printed.
func probeAnswer(t *testing.T, resp sandbox.Response, err error) string {
	t.Helper()
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || xe.Code != 3 {
		t.Fatalf("err = %v (stderr %q), want exit 3", err, resp.Stderr)
	}
	parent, ok := strings.CutSuffix(string(resp.Stdout), "in\n")
	if !ok {
		t.Errorf("stdout %q does not end with the call's stdin", resp.Stdout)
	}
	if string(resp.Stderr) != "e\n" {
		t.Errorf("stderr %q, want the command's alone", resp.Stderr)
	}
	return parent
}

// With the defaults (the API, an init) the command runs under the
// tether, which passes stdin, output and exit status as they are.
func TestRunTether(t *testing.T) {
	t.Parallel()
	sb := openRun(t, uniqueName(t), map[string]any{})
	resp, err := sb.Spawn(ctxTimeout(t, time.Minute), tetherProbe)
	if got, want := probeAnswer(t, resp, err), tetherTarget+"\n"+tether.Flag+"\n"; got != want {
		t.Errorf("the command's parent runs %q, want the tether %q", got, want)
	}
	if off := sb.run.(*apiRunner).tetherOff(); off != "" {
		t.Errorf("the tether was dropped: %s", off)
	}
}

// Without an init the command is PID 1, and no tether.
func TestRunNoTetherWithoutInit(t *testing.T) {
	t.Parallel()
	sb := openRun(t, uniqueName(t), map[string]any{"init": false})
	off := sb.run.(*apiRunner).tetherOff()
	if !strings.Contains(off, "init: false") {
		t.Errorf("tetherOff = %q, want it to name init: false", off)
	}
}

// A tether the engine cannot mount, or the container cannot execute, is
// dropped: the call runs again without it, as every later one does, and
// the caller sees nothing of the failed attempt.
func TestRunTetherFallsBack(t *testing.T) {
	t.Parallel()
	notExecutable := filepath.Join(t.TempDir(), "tether")
	if err := os.WriteFile(notExecutable, []byte("not a program\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, why string }{
		// The engine refuses the create: its bind source does not exist.
		{"engine cannot see it", "/nonexistent/promptkit-sandbox-docker", "/nonexistent/promptkit-sandbox-docker"},
		// The init cannot exec it: the container exits without the Hello.
		{"container cannot execute it", notExecutable, "before its tether " + tetherTarget + " ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sb := openRun(t, uniqueName(t), map[string]any{})
			r := sb.run.(*apiRunner)
			r.tether.Store(&tetherBin{path: tc.path})
			for i := range 2 {
				resp, err := sb.Spawn(ctxTimeout(t, time.Minute), tetherProbe)
				if parent := probeAnswer(t, resp, err); strings.Contains(parent, tether.Flag) {
					t.Errorf("call %d ran under the tether", i)
				}
				if off := r.tetherOff(); !strings.Contains(off, tc.why) {
					t.Errorf("after call %d: tetherOff = %q, want it to say %q", i, off, tc.why)
				}
			}
		})
	}
}

// The image's entrypoint runs under the tether, as it runs alone without
// one: the container's entrypoint is the tether's, then the image's.
func TestTetherEntrypoint(t *testing.T) {
	r := &apiRunner{set: &runSettings{}, entrypoint: []string{"/ep", "--flag"}}
	spec := runSpec{command: "hook", args: []string{"a"}}
	cfg, host := r.containerConfig(spec, &tetherBin{path: "/plugins/promptkit-sandbox-docker"})
	if got, want := strings.Join(cfg.Entrypoint, " "), tetherTarget+" "+tether.Flag+" /ep --flag"; got != want {
		t.Errorf("entrypoint %q, want %q", got, want)
	}
	if got := strings.Join(cfg.Cmd, " "); got != "hook a" {
		t.Errorf("cmd %q, want the call's", got)
	}
	if len(host.Mounts) != 1 || host.Mounts[0].Source != "/plugins/promptkit-sandbox-docker" || host.Mounts[0].Target != tetherTarget || !host.Mounts[0].ReadOnly {
		t.Errorf("mounts %+v, want the tether's, read-only", host.Mounts)
	}
	cfg, host = r.containerConfig(spec, nil)
	if cfg.Entrypoint != nil || len(host.Mounts) != 0 {
		t.Errorf("without a tether: entrypoint %q, mounts %+v; want the image's and none", cfg.Entrypoint, host.Mounts)
	}
}

func TestHelloFilter(t *testing.T) {
	hello := tether.Hello
	for _, tc := range []struct {
		name   string
		chunks []string
		seen   bool
		passed string // what reached the next writer
		kept   string // what it kept, without the Hello
	}{
		{"whole", []string{hello + "hook"}, true, "hook", ""},
		{"in pieces", []string{hello[:3], hello[3:7], hello[7:] + "ho", "ok"}, true, "hook", ""},
		{"only the hello", []string{hello}, true, "", ""},
		{"not yet all of it", []string{hello[:5]}, false, "", hello[:5]},
		{"an init's line", []string{"[FATAL tini (7)] exec x failed\n"}, false, "", "[FATAL tini (7)] exec x failed\n"},
		{"a different start", []string{hello[:4], "X", hello}, false, "", hello[:4] + "X" + hello},
		{"nothing", nil, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var next strings.Builder
			f := newHelloFilter(&next)
			for _, c := range tc.chunks {
				if n, err := f.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", c, n, err)
				}
			}
			seen, kept := f.seen()
			if seen != tc.seen || next.String() != tc.passed || kept != tc.kept {
				t.Errorf("seen %v, passed %q, kept %q; want %v, %q, %q", seen, next.String(), kept, tc.seen, tc.passed, tc.kept)
			}
		})
	}
	// What it keeps of a stderr without the Hello is bounded.
	f := newHelloFilter(io.Discard)
	for range 10 {
		_, _ = f.Write([]byte(strings.Repeat("x", 1000)))
	}
	if _, kept := f.seen(); len(kept) != heldMax {
		t.Errorf("kept %d bytes, want %d", len(kept), heldMax)
	}
}
