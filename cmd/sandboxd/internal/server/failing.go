package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/verify"
)

// Bounds on what is remembered of failed tests.
const (
	maxRecordedFailures  = 1000 // per session and workspace
	defaultFailuresShown = 100
)

// failures remembers, per MCP session and workspace, which tests failed
// in the last run_tests (or run_failing_tests) call, so they can be run
// again alone. A session's records go when it ends.
type failures struct {
	mu      sync.Mutex
	records map[failureKey]*failureRecord
}

type failureKey struct{ session, workspace string }

type failureRecord struct {
	path    string // run_tests' path argument: where the project is
	tests   []verify.TestID
	dropped int // failures past maxRecordedFailures
	at      time.Time
}

func newFailures() *failures { return &failures{records: map[failureKey]*failureRecord{}} }

func (f *failures) get(k failureKey) (failureRecord, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.records[k]
	if !ok {
		return failureRecord{}, false
	}
	return *r, true
}

func (f *failures) set(k failureKey, path string, tests []verify.TestID) {
	r := &failureRecord{path: path, at: time.Now()}
	for _, t := range tests {
		if !slices.Contains(r.tests, t) {
			if len(r.tests) == maxRecordedFailures {
				r.dropped++
				continue
			}
			r.tests = append(r.tests, t)
		}
	}
	slices.SortFunc(r.tests, func(a, b verify.TestID) int { return strings.Compare(a.String(), b.String()) })
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records[k] = r
}

// forget drops every record of a session that ended.
func (f *failures) forget(session string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.records {
		if k.session == session {
			delete(f.records, k)
		}
	}
}

// registerFailingTestTools adds last_test_failures and
// run_failing_tests, alongside run_tests.
func (s *Server) registerFailingTestTools(m *mcpserver.MCPServer, ws []mcp.ToolOption) {
	addTool(s, m, mcp.NewTool("last_test_failures", append(ws,
		mcp.WithDescription("List the tests that failed in this session's last run_tests or run_failing_tests call in the workspace, one per line as package TestName (subtests as TestName/subtest)."),
		mcp.WithNumber("limit", mcp.Description(fmt.Sprintf("At most this many tests (default %d)", defaultFailuresShown))),
		mcp.WithReadOnlyHintAnnotation(true),
	)...), inSpace(s, s.lastTestFailures))
	addTool(s, m, mcp.NewTool("run_failing_tests", append(ws,
		mcp.WithDescription("Run again exactly the tests that failed in this session's last run_tests call (each package runs only its failed tests; a failed subtest runs alone), report as run_tests does, and update the record: tests that pass drop out."+verifyResult+s.budgetNote("run")),
		mcp.WithNumber("timeout", mcp.Description(fmt.Sprintf("Timeout for the whole call in milliseconds (default %d, max %d)", verify.DefaultTimeout.Milliseconds(), verify.MaxTimeout.Milliseconds()))),
		secretsParam(),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	)...), inSpace(s, budgeted(s, "run_failing_tests", s.runFailingTests)))
}

// recordTests remembers a test run's failures for the calling session.
func (s *Server) recordTests(ctx context.Context, sp *space, path string, r *verify.Report) {
	s.failed.set(failureKey{sessionID(ctx), sp.name}, path, r.FailedTests)
}

const noRecord = "No test run recorded in this session for this workspace: call run_tests first."

type lastFailuresArgs struct {
	inWorkspace
	Limit *int `json:"limit"` // default defaultFailuresShown
}

func (s *Server) lastTestFailures(ctx context.Context, sp *space, a lastFailuresArgs) (string, error) {
	limit := defaultFailuresShown
	if a.Limit != nil {
		limit = *a.Limit
	}
	if limit <= 0 {
		return "", fmt.Errorf("limit %d: want at least 1", limit)
	}
	rec, ok := s.failed.get(failureKey{sessionID(ctx), sp.name})
	if !ok {
		return noRecord, nil
	}
	if len(rec.tests) == 0 {
		return fmt.Sprintf("No failing tests: the last run (%s) had none.", rec.at.UTC().Format(time.TimeOnly)), nil
	}
	var b strings.Builder
	for _, t := range rec.tests[:min(limit, len(rec.tests))] {
		b.WriteString(t.String())
		b.WriteByte('\n')
	}
	n := len(rec.tests) + rec.dropped
	fmt.Fprintf(&b, "%d failing %s recorded from the run at %s UTC", n, plural(n, "test", "tests"), rec.at.UTC().Format(time.TimeOnly))
	if shown := min(limit, len(rec.tests)); shown < n {
		fmt.Fprintf(&b, " (showing %d)", shown)
	}
	return b.String(), nil
}

// runFailingArgs are run_failing_tests' arguments: it runs where
// run_tests ran.
type runFailingArgs struct {
	inWorkspace
	runArgs
}

func (runFailingArgs) runPath() string { return "" }

func (s *Server) runFailingTests(ctx context.Context, sp *space, a runFailingArgs) (string, error) {
	vr, err := s.verifyRequest(ctx, "", a.runArgs)
	if err != nil {
		return "", err
	}
	key := failureKey{sessionID(ctx), sp.name}
	rec, ok := s.failed.get(key)
	switch {
	case !ok:
		return noRecord, nil
	case len(rec.tests) == 0:
		return "No failing tests recorded: the last run had none, so there is nothing to run again.", nil
	}
	vr.Path = rec.path
	reports, err := sp.verify.Rerun(ctx, vr, rec.tests)
	if err != nil {
		return "", err
	}
	failed, passed := map[verify.TestID]bool{}, map[verify.TestID]bool{}
	var now []verify.TestID
	var b strings.Builder
	for _, r := range reports {
		b.WriteString(r.String())
		b.WriteByte('\n')
		for _, t := range r.FailedTests {
			failed[t] = true
			now = append(now, t)
		}
		for _, t := range r.PassedTests {
			passed[t] = true
		}
	}
	var fixed, notRun []string
	for _, t := range rec.tests {
		switch {
		case failed[t]:
		case passed[t]:
			fixed = append(fixed, t.String())
		default:
			// Not run (a build failure, the time ran out, or it is
			// gone): it stays recorded.
			notRun = append(notRun, t.String())
			now = append(now, t)
		}
	}
	s.failed.set(key, rec.path, now)
	fmt.Fprintf(&b, "Reran %d recorded failing %s: %d now pass, %d still fail, %d did not run.",
		len(rec.tests), plural(len(rec.tests), "test", "tests"), len(fixed), len(rec.tests)-len(fixed)-len(notRun), len(notRun))
	if len(fixed) > 0 {
		fmt.Fprintf(&b, "\nNow passing: %s", strings.Join(fixed, ", "))
	}
	if len(notRun) > 0 {
		fmt.Fprintf(&b, "\nDid not run (still recorded): %s", strings.Join(notRun, ", "))
	}
	return b.String(), nil
}
