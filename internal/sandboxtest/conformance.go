package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The cases of the suite, by subtest name; Options.Exempt takes these.
const (
	CaseStdio          = "stdio"
	CaseExitCodes      = "exit_codes"
	CaseMissingCommand = "missing_command"
	CaseEnv            = "env"
	CaseTimeout        = "timeout"
	CaseTimeoutTree    = "timeout_children"
	CaseTimeoutSession = "timeout_new_session"
	CaseExitLeftovers  = "leftovers_after_exit"
	CaseExitDaemon     = "daemon_after_exit"
	CaseCancel         = "cancel"
	CaseConcurrent     = "concurrent"
	CaseOutputCap      = "output_cap"
	CaseTypedErrors    = "typed_errors"
	CaseDiagnostics    = "diagnostics"
	CaseClose          = "close"
)

// OutputLimit is the output_limit the suite opens every cell's sandbox
// with: small, so the cap case is cheap, and odd, so a cap applied per
// chunk or rounded to a buffer size shows.
const OutputLimit = 512<<10 + 17

// ConcurrentN is how many calls the concurrency case makes at once.
const ConcurrentN = 32

// Defaults of Options.
const (
	DefaultKillTimeout = 2 * time.Second
	DefaultSlack       = 10 * time.Second
	DefaultCallTimeout = time.Minute
)

// OpenTimeout bounds a test's open of a sandbox that lives in a
// container or a pod: the open_timeout a cell gives. It is well over
// sandbox.DefaultOpenTimeout because on a two-core machine running the
// race-built tests, a container engine and a cluster side by side, a
// pod's first exec was seen to stall past 30 s; a user on such a machine
// would raise open_timeout the same way.
const OpenTimeout = 2 * time.Minute

// goneWithin bounds how long after Spawn returns a killed process may
// still show: a kill is asynchronous, so one that was sent a moment ago
// may take a little while (the bound proctest uses).
const goneWithin = 5 * time.Second

// Cell is one configuration of one backend, reached one way (in process
// or through a plugin binary): the suite's unit.
type Cell struct {
	// Name names the cell's subtest.
	Name string
	// Open opens a fresh sandbox of the cell, its own configuration with
	// cfg's keys added (the suite adds output_limit). The suite closes
	// what Open returns; Open may register cleanups of its own.
	Open func(t *testing.T, cfg map[string]any) sandbox.Sandbox
	Options
}

// Options adapt the suite to a cell; the zero value suits a backend that
// runs its processes on this machine.
type Options struct {
	// KillTimeout is the Request.Timeout of the timeout cases. It should
	// cover the target's start (a container's cold start): when the
	// call's processes did not run before it fired, the case proves
	// nothing and tries again with a longer one. DefaultKillTimeout when
	// zero.
	KillTimeout time.Duration
	// Slack bounds how late after its timeout fires, or after its
	// context is cancelled, a call may return; DefaultSlack when zero.
	Slack time.Duration
	// CallTimeout is the Request.Timeout of every other call;
	// DefaultCallTimeout when zero.
	CallTimeout time.Duration
	// Procs lists the running processes of the target with an argument
	// equal to marker; HostProcs when nil.
	Procs func(marker string) ([]Proc, error)
	// Remains lists what else of a killed call must be gone once its
	// processes are (docker_run: the containers they ran in), empty when
	// nothing is; nil checks nothing more.
	Remains func(t testing.TB, procs []Proc) []string
	// Exempt names the cases that cannot hold in this cell, each with
	// the reason. An exempt case is skipped, saying why.
	Exempt map[string]string
}

func (o Options) withDefaults() Options {
	if o.KillTimeout <= 0 {
		o.KillTimeout = DefaultKillTimeout
	}
	if o.Slack <= 0 {
		o.Slack = DefaultSlack
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Procs == nil {
		o.Procs = HostProcs
	}
	return o
}

// Conformance runs the contract's cases against each cell, the cells in
// parallel, each a subtest named for it. The target must have /bin/sh
// (with $((...)) arithmetic, printf and kill builtins), cat, env, head,
// sleep and yes: a POSIX host, or the busybox test image.
func Conformance(t *testing.T, cells ...Cell) {
	t.Helper()
	for _, c := range cells {
		for k := range c.Exempt {
			if !slices.Contains(caseNames(), k) {
				t.Fatalf("cell %s exempts an unknown case %q (cases: %s)", c.Name, k, strings.Join(caseNames(), ", "))
			}
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			c.Options = c.withDefaults()
			r := &runner{cell: c, sb: openCell(t, c, map[string]any{"output_limit": OutputLimit})}
			run := func(tc caseDef) {
				t.Run(tc.name, func(t *testing.T) {
					if why, ok := c.Exempt[tc.name]; ok {
						t.Skipf("exempt in this cell: %s", why)
					}
					tc.run(r, t)
				})
			}
			// The slow cases mostly wait for a timeout or a kill: they
			// run beside the quick ones (t.Run may be called from several
			// goroutines), then the cases that want the sandbox alone.
			var wg sync.WaitGroup
			for _, tc := range cases {
				if tc.when == beside {
					wg.Go(func() { run(tc) })
				}
			}
			for _, tc := range cases {
				if tc.when == inTurn {
					run(tc)
				}
			}
			wg.Wait()
			for _, tc := range cases {
				if tc.when == alone {
					run(tc)
				}
			}
		})
	}
}

// openCell opens a sandbox of c and closes it when the test ends.
func openCell(t *testing.T, c Cell, cfg map[string]any) sandbox.Sandbox {
	t.Helper()
	sb := c.Open(t, cfg)
	if sb == nil {
		t.Fatal("Open returned no sandbox")
	}
	t.Cleanup(func() {
		if err := sandbox.Close(sb); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return sb
}

// When a case runs among the others of its cell.
const (
	inTurn = iota // one after the other, in the order of cases
	beside        // concurrently with the inTurn cases
	alone         // after all others, one at a time
)

type caseDef struct {
	name string
	run  func(*runner, *testing.T)
	when int
}

var cases = []caseDef{
	{CaseStdio, (*runner).stdio, inTurn},
	{CaseExitCodes, (*runner).exitCodes, inTurn},
	{CaseMissingCommand, (*runner).missingCommand, inTurn},
	{CaseEnv, (*runner).env, inTurn},
	{CaseTimeout, (*runner).timeout, beside},
	{CaseTimeoutTree, (*runner).timeoutChildren, beside},
	{CaseTimeoutSession, (*runner).timeoutSession, beside},
	{CaseExitLeftovers, (*runner).exitLeftovers, beside},
	{CaseExitDaemon, (*runner).exitDaemon, beside},
	{CaseCancel, (*runner).cancel, beside},
	{CaseOutputCap, (*runner).outputCap, inTurn},
	{CaseTypedErrors, (*runner).typedErrors, inTurn},
	{CaseDiagnostics, (*runner).diagnostics, inTurn},
	{CaseConcurrent, (*runner).concurrent, alone},
	{CaseClose, (*runner).close, alone},
}

func caseNames() []string {
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.name
	}
	return names
}

// repetitions is how often the slow cases (timeouts, cancels) run in a
// row: each repetition proves the sandbox survived the last one's kill.
func repetitions() int {
	if testing.Short() {
		return 1
	}
	return 3
}

type runner struct {
	cell Cell
	sb   sandbox.Sandbox
}

func sh(script string, args ...string) sandbox.Request {
	return sandbox.Request{Command: "/bin/sh", Args: append([]string{"-c", script, "sh"}, args...)}
}

// probe is one call of a batch and the check of what it returned.
type probe struct {
	name string
	req  sandbox.Request
	// ctx, when set, makes the call's context (its CancelFunc is called
	// when the call returns); otherwise the context outlives the
	// request's timeout by the cell's Slack.
	ctx   func() (context.Context, context.CancelFunc)
	check func(t *testing.T, resp sandbox.Response, err error, took time.Duration)
}

// batch makes the probes' calls at once (a sandbox serves concurrent
// calls, and a slow target's latency then counts once), then checks each
// in a subtest of its own. A request without a timeout gets the cell's
// CallTimeout.
func (r *runner) batch(t *testing.T, probes ...probe) {
	t.Helper()
	type result struct {
		resp sandbox.Response
		err  error
		took time.Duration
	}
	results := make([]result, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			req := p.req
			if req.Timeout == 0 {
				req.Timeout = r.cell.CallTimeout
			}
			ctx, cancel := context.WithTimeout(context.Background(), req.Timeout+r.cell.Slack)
			if p.ctx != nil {
				cancel()
				ctx, cancel = p.ctx()
			}
			defer cancel()
			start := time.Now()
			resp, err := r.sb.Spawn(ctx, req)
			results[i] = result{resp, err, time.Since(start)}
		})
	}
	wg.Wait()
	for i, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			res := results[i]
			if res.resp.Err != res.err {
				t.Errorf("Response.Err = %v, want the error Spawn returned (%v)", res.resp.Err, res.err)
			}
			p.check(t, res.resp, res.err, res.took)
		})
	}
}

// call is a batch of one, checked in the calling test.
func (r *runner) call(t *testing.T, req sandbox.Request) (resp sandbox.Response, err error) {
	t.Helper()
	if req.Timeout == 0 {
		req.Timeout = r.cell.CallTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), req.Timeout+r.cell.Slack)
	defer cancel()
	resp, err = r.sb.Spawn(ctx, req)
	if resp.Err != err {
		t.Errorf("Response.Err = %v, want the error Spawn returned (%v)", resp.Err, err)
	}
	return resp, err
}

// show prints bytes for a failure message: quoted when short, else their
// length and a quoted head and tail.
func show(b []byte) string {
	if len(b) <= 160 {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%d bytes %q...%q", len(b), b[:80], b[len(b)-40:])
}

func describe(resp sandbox.Response, err error) string {
	return fmt.Sprintf("err = %v (kind %v); stdout = %s (truncated %v); stderr = %s (truncated %v)",
		err, sandbox.KindOf(err), show(resp.Stdout), resp.StdoutTruncated, show(resp.Stderr), resp.StderrTruncated)
}

// wantStreams checks both streams exactly and that neither was cut.
func wantStreams(t *testing.T, resp sandbox.Response, err error, stdout, stderr string) {
	t.Helper()
	if string(resp.Stdout) != stdout || string(resp.Stderr) != stderr || resp.Truncated() {
		t.Errorf("want stdout %s, stderr %s, nothing truncated; got %s", show([]byte(stdout)), show([]byte(stderr)), describe(resp, err))
	}
}

func wantOK(t *testing.T, resp sandbox.Response, err error, stdout, stderr string) {
	t.Helper()
	if err != nil {
		t.Errorf("want success; got %s", describe(resp, err))
		return
	}
	wantStreams(t, resp, err, stdout, stderr)
}

func wantExit(t *testing.T, resp sandbox.Response, err error, code int) {
	t.Helper()
	wantKind(t, resp, err, sandbox.KindExit)
	var xe *sandbox.ExitError
	if errors.As(err, &xe) && (xe.Code != code || xe.Signal != "") {
		t.Errorf("exit code %d (signal %q), want %d and no signal; %s", xe.Code, xe.Signal, code, describe(resp, err))
	}
}

// wantKind checks that err is of kind and of no other: each sentinel,
// the standard context errors and *ExitError answer as that kind says.
func wantKind(t *testing.T, resp sandbox.Response, err error, kind sandbox.Kind) {
	t.Helper()
	if err == nil {
		t.Errorf("no error, want %v; %s", kind, describe(resp, err))
		return
	}
	var xe *sandbox.ExitError
	checks := []struct {
		what string
		got  bool
		want bool
	}{
		{"errors.Is(err, sandbox.ErrTimeout)", errors.Is(err, sandbox.ErrTimeout), kind == sandbox.KindTimeout},
		{"errors.Is(err, context.DeadlineExceeded)", errors.Is(err, context.DeadlineExceeded), kind == sandbox.KindTimeout},
		{"errors.Is(err, sandbox.ErrCanceled)", errors.Is(err, sandbox.ErrCanceled), kind == sandbox.KindCanceled},
		{"errors.Is(err, context.Canceled)", errors.Is(err, context.Canceled), kind == sandbox.KindCanceled},
		{"errors.Is(err, sandbox.ErrStart)", errors.Is(err, sandbox.ErrStart), kind == sandbox.KindStart},
		{"errors.Is(err, sandbox.ErrTransport)", errors.Is(err, sandbox.ErrTransport), kind == sandbox.KindTransport},
		{"errors.As(err, *sandbox.ExitError)", errors.As(err, &xe), kind == sandbox.KindExit},
		{"sandbox.KindOf(err) == " + kind.String(), sandbox.KindOf(err) == kind, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v (the error should be of kind %v); %s", c.what, c.got, c.want, kind, describe(resp, err))
		}
	}
	if err.Error() == "" {
		t.Errorf("the %v error has an empty message", kind)
	}
}
