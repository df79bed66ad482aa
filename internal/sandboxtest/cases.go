package sandboxtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// stdio: Request.Stdin reaches the process's stdin, byte for byte;
// stdout and stderr come back apart, exactly.
func (r *runner) stdio(t *testing.T) {
	in := make([]byte, 256<<10)
	for i := range in {
		in[i] = byte(i*7 + i>>8) // every byte value, no period of 256
	}
	withStdin := func(req sandbox.Request, stdin []byte) sandbox.Request {
		req.Stdin = stdin
		return req
	}
	ok := func(stdout, stderr string) func(*testing.T, sandbox.Response, error, time.Duration) {
		return func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) {
			wantOK(t, resp, err, stdout, stderr)
		}
	}
	r.batch(t,
		probe{name: "binary stdin through cat", req: withStdin(sh(`cat`), in), check: ok(string(in), "")},
		probe{name: "streams apart", req: sh(`printf o1; printf e1 >&2; printf o2; printf 'e2\n' >&2; printf 'o3\n'`),
			check: ok("o1o2o3\n", "e1e2\n")},
		probe{name: "stdin split between the streams", req: withStdin(sh(`read -r line; printf 'out:%s' "$line"; cat >&2`), []byte("first line\nrest\x00of it")),
			check: ok("out:first line", "rest\x00of it")},
		probe{name: "no stdin", req: sh(`cat; printf done`), check: ok("done", "")},
		probe{name: "stdin never read", req: withStdin(sh(`printf ignored`), in), check: ok("ignored", "")},
		// Past gRPC's 4 MiB message limit, so a plugin hop must stream it.
		probe{name: "8 MiB of stdin", req: withStdin(sh(`wc -c | tr -d ' '`), bytes.Repeat([]byte("x"), 8<<20+1)),
			check: ok("8388609\n", "")},
	)
}

// exitCodes: a non-zero exit is an *ExitError with the code, whatever the
// code: 125, 126 and 127, which CLIs and shells use for their own
// failures, are the hook's own when the hook exits with them.
func (r *runner) exitCodes(t *testing.T) {
	var probes []probe
	for _, code := range []int{0, 1, 3, 255, 125, 126, 127} {
		out, errOut := fmt.Sprintf("out %d", code), fmt.Sprintf("err %d", code)
		probes = append(probes, probe{
			name: strconv.Itoa(code),
			req:  sh(fmt.Sprintf(`printf '%s'; printf '%s' >&2; exit %d`, out, errOut, code)),
			check: func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) {
				if code == 0 {
					wantOK(t, resp, err, out, errOut)
					return
				}
				wantExit(t, resp, err, code)
				wantStreams(t, resp, err, out, errOut)
			},
		})
	}
	// The hook (a shell) started; what it could not run is its own
	// business, and so is its exit status 127.
	inner := "pks-conformance-inner-" + randHex()
	probes = append(probes, probe{
		name: "127 from a command missing inside the hook",
		req:  sh(inner),
		check: func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) {
			wantExit(t, resp, err, 127)
			if len(resp.Stdout) != 0 || !bytes.Contains(resp.Stderr, []byte(inner)) {
				t.Errorf("want no stdout and the shell's complaint naming %s on stderr; %s", inner, describe(resp, err))
			}
		},
	})
	r.batch(t, probes...)
}

// missingCommand: a command that cannot be started is sandbox.ErrStart
// naming it, never an *ExitError (not 127 or 126 from a shell or a CLI),
// and nothing reaches the hook's streams.
func (r *runner) missingCommand(t *testing.T) {
	name := "pks-conformance-missing-" + randHex()
	var probes []probe
	for _, tc := range []struct{ what, command string }{
		{"not on PATH", name},
		{"no such path", "/nonexistent/" + name},
		{"not executable", "/etc/passwd"},
	} {
		probes = append(probes, probe{
			name: tc.what,
			req:  sandbox.Request{Command: tc.command, Args: []string{"arg"}, Stdin: []byte("input")},
			check: func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) {
				wantKind(t, resp, err, sandbox.KindStart)
				if err != nil && !strings.Contains(err.Error(), tc.command) {
					t.Errorf("the error does not name the command %s: %v", tc.command, err)
				}
				wantStreams(t, resp, err, "", "")
			},
		})
	}
	r.batch(t, probes...)
}

// env: "KEY=value" reaches the process in the target verbatim (spaces,
// quotes, $, backslashes and newlines included); a bare "KEY" forwards
// the caller's value at the time of the call, and is dropped when the
// caller has none.
func (r *runner) env(t *testing.T) {
	// Names no other test uses, set with os.Setenv: t.Setenv is refused in
	// parallel tests, and only this case reads them.
	suffix := strings.ToUpper(randHex())
	setKey, fwdKey, unsetKey := "PKS_CONF_SET_"+suffix, "PKS_CONF_FWD_"+suffix, "PKS_CONF_UNSET_"+suffix
	const setValue = "a  b 'c' \"d\" $e \\f *;|\nline2\\n"
	if err := os.Unsetenv(unsetKey); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Unsetenv(fwdKey) })
	for _, fwd := range []string{"forwarded-one", "forwarded-two"} {
		if err := os.Setenv(fwdKey, fwd); err != nil {
			t.Fatal(err)
		}
		req := sh(fmt.Sprintf(`printf '%%s|%%s|%%s' "$%s" "$%s" "${%s-unset}"`, setKey, fwdKey, unsetKey))
		req.Env = []string{setKey + "=" + setValue, fwdKey, unsetKey}
		resp, err := r.call(t, req)
		if err != nil {
			t.Fatalf("want success; got %s", describe(resp, err))
		}
		wantStreams(t, resp, err, setValue+"|"+fwd+"|unset", "")
	}
}

// timeout: Request.Timeout fires in the target: the call returns a
// timeout error soon after, with the output written before it, and the
// process is gone. Repeated, in a row.
func (r *runner) timeout(t *testing.T) {
	for i := range repetitions() {
		t.Run(strconv.Itoa(i+1), func(t *testing.T) {
			r.timeoutOnce(t, `exec sleep "$m"`, 1)
		})
	}
}

// timeoutChildren: as timeout, for a process that started children
// (as sh -c 'sleep 300 & sleep 300' does), a grandchild in a subshell,
// a child that ignores SIGTERM and an orphan whose parent has exited:
// they are all gone too.
func (r *runner) timeoutChildren(t *testing.T) {
	r.timeoutOnce(t, `sleep "$m" & (sleep "$m" & wait) & sh -c 'trap "" TERM; sleep "$1"' sh "$m" & (sleep "$m" &); wait`, 4)
}

// timeoutSession: as timeout, for a child that started a session (and
// process group) of its own while its parent still runs: a kill of the
// call's process group alone misses it.
func (r *runner) timeoutSession(t *testing.T) {
	r.timeoutOnce(t, `setsid sleep "$m" & sleep "$m"`, 2)
}

// exitLeftovers: when the command exits, what it left running is killed
// at once: the call returns its exit status without waiting for a
// background child that still holds stdout open, and the child is gone.
// The command lingers a little after starting the child, so that the
// suite sees the child run; longer on a second or third attempt if it
// did not.
func (r *runner) exitLeftovers(t *testing.T) {
	r.exitLeaving(t, `sleep "$m" &`)
}

// exitDaemon: as exitLeftovers, for a daemon: a double fork, with a
// session of its own and its output elsewhere, whose parent has exited
// long before the command does. It is found and killed all the same.
func (r *runner) exitDaemon(t *testing.T) {
	r.exitLeaving(t, `(setsid sleep "$m" >/dev/null 2>&1 </dev/null &);`)
}

// exitLeaving runs start, which leaves one process running, in a
// command that then exits 4, and checks that process is killed without
// the call waiting for it.
func (r *runner) exitLeaving(t *testing.T, start string) {
	linger := time.Second
	for attempt := 1; ; attempt++ {
		w := r.runWatched(t, fmt.Sprintf(`%s sleep %d; printf done; exit 4`, start, int(linger.Seconds())), 1, r.cell.CallTimeout, false)
		t.Logf("returned after %v", w.took.Round(time.Millisecond))
		if len(w.seen) == 0 && attempt < timeoutAttempts {
			r.assertGone(t, w, 0)
			linger *= 3
			t.Logf("the child did not show while the command ran; again, the command lingering %v", linger)
			continue
		}
		wantExit(t, w.resp, w.err, 4)
		if late := w.took - w.seenAt; late > linger+r.cell.Slack {
			t.Errorf("returned %v after the child showed: it waited for the leftover", late.Round(time.Millisecond))
		}
		wantStreams(t, w.resp, w.err, "started-outdone", "started-err")
		r.assertGone(t, w, 1)
		return
	}
}

// timeoutAttempts is how many times the timeout cases try, each with
// thrice the timeout of the last, when the target did not start the
// call's processes before the timeout fired: such a call proves nothing
// about killing them (only that nothing is left), and a busy machine can
// start a container slowly.
const timeoutAttempts = 3

func (r *runner) timeoutOnce(t *testing.T, body string, need int) {
	t.Helper()
	limit := r.cell.KillTimeout
	for attempt := 1; ; attempt++ {
		w := r.runWatched(t, body, need, limit, false)
		t.Logf("returned after %v (timeout %v); processes seen after %v",
			w.took.Round(time.Millisecond), limit, w.seenAt.Round(time.Millisecond))
		ranInTime := len(w.seen) >= need && w.seenAt <= limit
		if !ranInTime && sandbox.KindOf(w.err) == sandbox.KindTimeout && attempt < timeoutAttempts {
			r.assertGone(t, w, 0)
			limit *= 3
			t.Logf("the call's processes did not run before the timeout fired; again with %v", limit)
			continue
		}
		wantKind(t, w.resp, w.err, sandbox.KindTimeout)
		if w.took < limit {
			t.Errorf("returned after %v, before its timeout of %v", w.took, limit)
		}
		if w.took > limit+r.cell.Slack {
			t.Errorf("returned after %v, more than %v after its timeout of %v", w.took, r.cell.Slack, limit)
		}
		wantStreams(t, w.resp, w.err, "started-out", "started-err")
		r.assertGone(t, w, need)
		return
	}
}

// cancel: cancelling the context mid-call returns context.Canceled soon
// after, with the output written before, and the process and its
// children are gone. Repeated, in a row.
func (r *runner) cancel(t *testing.T) {
	for i := range repetitions() {
		t.Run(strconv.Itoa(i+1), func(t *testing.T) {
			w := r.cancelStarted(t)
			wantKind(t, w.resp, w.err, sandbox.KindCanceled)
			if late := w.took - w.seenAt; late > r.cell.Slack {
				t.Errorf("returned %v after the cancel, more than %v", late.Round(time.Millisecond), r.cell.Slack)
			}
			wantStreams(t, w.resp, w.err, "started-out", "started-err")
			r.assertGone(t, w, 2)
		})
	}
}

// cancelStarted runs a call and cancels it once its processes run. A
// call whose processes did not start in time (a busy machine can take
// that long to start a container) proves nothing about killing them:
// after a check that nothing of it is left, it is tried again, up to
// timeoutAttempts calls.
func (r *runner) cancelStarted(t *testing.T) watched {
	t.Helper()
	for attempt := 1; ; attempt++ {
		w := r.runWatched(t, `sleep "$m" & sleep "$m"`, 2, r.cell.CallTimeout, true)
		t.Logf("cancelled after %v; returned after %v", w.seenAt.Round(time.Millisecond), w.took.Round(time.Millisecond))
		if !w.gaveUp {
			return w
		}
		if attempt == timeoutAttempts {
			t.Errorf("in %d calls, the call's processes never showed before the cancel", attempt)
			return w
		}
		r.assertGone(t, w, 0)
		t.Logf("the call's processes did not run before the cancel; again")
	}
}

// concurrent: ConcurrentN calls at once, each with its own stdin,
// environment and exit code, each come back as its own.
func (r *runner) concurrent(t *testing.T) {
	ConcurrentCalls(t, r.sb, ConcurrentN, 2*r.cell.CallTimeout)
}

// outputCap: past OutputLimit a stream is cut at exactly that many bytes
// and says so; at exactly the limit it is whole and not cut. The call
// itself succeeds either way.
func (r *runner) outputCap(t *testing.T) {
	const outPattern, errPattern = "0123456789abcde\n", "FEDCBA987654321\n"
	var probes []probe
	for _, tc := range []struct {
		what      string
		n         int
		truncated bool
	}{
		{"past the cap", 2*OutputLimit + 1234, true},
		{"at the cap", OutputLimit, false},
	} {
		probes = append(probes, probe{
			name: tc.what,
			req: sh(fmt.Sprintf(`yes %s | head -c %d; yes %s | head -c %d >&2`,
				strings.TrimSpace(outPattern), tc.n, strings.TrimSpace(errPattern), tc.n)),
			check: func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) {
				if err != nil {
					t.Fatalf("want success; got %s", describe(resp, err))
				}
				for _, s := range []struct {
					name      string
					got       []byte
					truncated bool
					pattern   string
				}{
					{"stdout", resp.Stdout, resp.StdoutTruncated, outPattern},
					{"stderr", resp.Stderr, resp.StderrTruncated, errPattern},
				} {
					want := bytes.Repeat([]byte(s.pattern), OutputLimit/len(s.pattern)+1)[:OutputLimit]
					if !bytes.Equal(s.got, want) || s.truncated != tc.truncated {
						at := firstDiff(s.got, want)
						t.Errorf("%s: %d bytes (truncated %v), want %d (truncated %v); first difference at byte %d: got %s",
							s.name, len(s.got), s.truncated, len(want), tc.truncated, at, show(s.got[min(at, len(s.got)):]))
					}
				}
			},
		})
	}
	r.batch(t, probes...)
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// typedErrors: every kind of failure a call can have answers errors.Is
// and errors.As as its kind says, and as no other kind.
func (r *runner) typedErrors(t *testing.T) {
	const short = 300 * time.Millisecond
	kind := func(k sandbox.Kind) func(*testing.T, sandbox.Response, error, time.Duration) {
		return func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) { wantKind(t, resp, err, k) }
	}
	sleep := sh(`exec sleep 30`)
	timed := sleep
	timed.Timeout = short
	r.batch(t,
		probe{name: "exit", req: sh(`exit 9`), check: func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) {
			wantExit(t, resp, err, 9)
		}},
		probe{name: "start", req: sandbox.Request{Command: "/nonexistent/pks-conformance-" + randHex()}, check: kind(sandbox.KindStart)},
		probe{name: "request timeout", req: timed, check: kind(sandbox.KindTimeout)},
		probe{name: "context deadline", req: sleep, check: kind(sandbox.KindTimeout),
			ctx: func() (context.Context, context.CancelFunc) { return context.WithTimeout(context.Background(), short) }},
		probe{name: "cancelled before the call", req: sh(`printf ran`),
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			check: func(t *testing.T, resp sandbox.Response, err error, took time.Duration) {
				wantKind(t, resp, err, sandbox.KindCanceled)
				if took > r.cell.Slack {
					t.Errorf("took %v to refuse a cancelled context", took)
				}
			}},
		probe{name: "cancelled during the call", req: sleep, check: kind(sandbox.KindCanceled),
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(short, cancel)
				return ctx, cancel
			}},
	)
}

// diagnostics: what the backend itself has to say (a CLI's "command
// terminated with exit code 1", an engine's "executable file not found",
// a wrapper's PID line) never reaches the hook's stdout or stderr: a
// silent hook's streams stay empty however its call ends.
func (r *runner) diagnostics(t *testing.T) {
	var probes []probe
	for _, code := range []int{1, 125, 126, 127} {
		probes = append(probes, probe{
			name: "silent exit " + strconv.Itoa(code),
			req:  sh(fmt.Sprintf(`exit %d`, code)),
			check: func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) {
				wantExit(t, resp, err, code)
				wantStreams(t, resp, err, "", "")
			},
		})
	}
	timed := sh(`exec sleep 30`)
	timed.Timeout = 500 * time.Millisecond
	probes = append(probes,
		probe{name: "missing command", req: sandbox.Request{Command: "pks-conformance-missing-" + randHex()},
			check: func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) {
				wantKind(t, resp, err, sandbox.KindStart)
				wantStreams(t, resp, err, "", "")
			}},
		probe{name: "silent timeout", req: timed,
			check: func(t *testing.T, resp sandbox.Response, err error, _ time.Duration) {
				wantKind(t, resp, err, sandbox.KindTimeout)
				wantStreams(t, resp, err, "", "")
			}},
	)
	r.batch(t, probes...)
}

// close: Close returns nil, a second Close is harmless, and a call after
// Close fails cleanly (a start or transport error; no panic, no hang).
func (r *runner) close(t *testing.T) {
	sb := r.cell.Open(t, map[string]any{"output_limit": OutputLimit})
	cl, ok := sb.(sandbox.Closer)
	if !ok {
		t.Fatalf("%T is not a sandbox.Closer; a cell whose sandbox holds nothing to close exempts %q, saying so", sb, CaseClose)
	}
	t.Cleanup(func() { _ = cl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), r.cell.CallTimeout)
	defer cancel()
	before := sh(`printf ok`)
	before.Timeout = r.cell.CallTimeout
	if resp, err := sb.Spawn(ctx, before); err != nil || string(resp.Stdout) != "ok" {
		t.Fatalf("a call before Close: %s", describe(resp, err))
	}
	for i := range 2 {
		done := make(chan error, 1)
		go func() { done <- cl.Close() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Close #%d = %v, want nil", i+1, err)
			}
		case <-time.After(r.cell.CallTimeout):
			t.Fatalf("Close #%d has not returned after %v", i+1, r.cell.CallTimeout)
		}
	}
	type result struct {
		resp  sandbox.Response
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{panic: p}
			}
		}()
		after := sh(`printf ran`)
		after.Timeout = r.cell.CallTimeout
		resp, err := sb.Spawn(ctx, after)
		done <- result{resp: resp, err: err}
	}()
	select {
	case res := <-done:
		switch k := sandbox.KindOf(res.err); {
		case res.panic != nil:
			t.Fatalf("Spawn after Close panicked: %v", res.panic)
		case k != sandbox.KindStart && k != sandbox.KindTransport:
			t.Errorf("Spawn after Close: want a start or transport error; got %s", describe(res.resp, res.err))
		case res.resp.Err != res.err:
			t.Errorf("Response.Err = %v, want the error Spawn returned (%v)", res.resp.Err, res.err)
		default:
			t.Logf("Spawn after Close: %v", res.err)
		}
	case <-time.After(r.cell.Slack):
		t.Fatalf("Spawn after Close has not returned after %v", r.cell.Slack)
	}
}
