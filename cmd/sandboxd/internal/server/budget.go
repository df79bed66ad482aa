package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/verify"
)

// budgeted runs a test, lint or type-check call under the call budget:
// one still running when the budget has passed answers with the output
// so far and goes on as a background shell (shells.Manager.Adopt), whose
// output is the answer the call would have given. Before then the call's
// end (the client cancelling it) stops the run as a timeout would; after,
// KillShell, the session's end or shutdown does. A call whose own
// timeout is within the budget runs as it always has.
func budgeted[A budgetedArgs](s *Server, tool string, fn spaceFunc[A]) spaceFunc[A] {
	return func(ctx context.Context, sp *space, args A) (string, error) {
		budget := s.cfg.CallBudget
		timeout := verify.DefaultTimeout
		if ms := args.timeoutMS(); ms > 0 {
			timeout = time.Duration(ms * float64(time.Millisecond))
		}
		if budget <= 0 || timeout <= budget {
			return fn(ctx, sp, args)
		}
		// The run keeps the call's values (its session, its span) but
		// not its end, which is watched below.
		runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		prog := &progress{}
		runCtx = context.WithValue(runCtx, progressKey{}, prog)
		type answer struct {
			text string
			err  error
		}
		done := make(chan answer, 1)
		go func() {
			text, err := fn(runCtx, sp, args)
			done <- answer{text, err}
		}()
		timer := time.NewTimer(budget)
		defer timer.Stop()
		select {
		case a := <-done:
			stop()
			return a.text, a.err
		case <-ctx.Done():
			stop() // kills what the run started, as its timeout would
			a := <-done
			return a.text, a.err
		case <-timer.C:
		}
		id, finish, err := sp.shells.Adopt(sessionID(ctx), describeRun(tool, args.runPath()), stop)
		if err != nil {
			// Shutting down: the run is stopped like any call.
			stop()
			<-done
			return "", err
		}
		go func() {
			a := <-done
			stop()
			_ = finish(a.text, a.err)
		}()
		return partialRun(tool, id, budget, timeout, prog), nil
	}
}

// budgetedArgs are what budgeted reads of a run's arguments.
type budgetedArgs interface {
	timeoutMS() float64 // the run's timeout argument, 0 for the default
	runPath() string    // its path argument, "" for none
}

// describeRun names an adopted run at path in BashOutput's list of
// shells.
func describeRun(tool, path string) string {
	if path != "" {
		return tool + " in " + path
	}
	return tool
}

// partialRun is the answer of a run that went on in the background: the
// end of its output so far, between a first line that says so and a last
// one that says what to call next.
func partialRun(tool, id string, budget, timeout time.Duration, prog *progress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[PARTIAL: %s is still running after %s, the call budget, and goes on in the background as shell %s.", tool, budget, id)
	step, lines, more := prog.tail()
	switch {
	case len(lines) == 0:
		b.WriteString(" It has printed nothing yet.]\n")
	case more:
		fmt.Fprintf(&b, " The last %d lines of its output so far (%s):]\n", len(lines), step)
	default:
		fmt.Fprintf(&b, " Its output so far (%s):]\n", step)
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[NOT FINISHED. Next: call BashOutput with bash_id %q: while the run goes on its status is \"running\"; once it has ended (status \"finished\") its output is the whole %s report, as this call would have answered.", id, tool)
	if tool == "run_tests" || tool == "run_failing_tests" {
		b.WriteString(" The failed tests are recorded for run_failing_tests when it ends.")
	}
	fmt.Fprintf(&b, " To stop it and every process it started, call KillShell with shell_id %q. Its timeout still applies: it is stopped %s after it started.]", id, timeout)
	return b.String()
}

// Bounds on the output a partial answer shows.
const (
	progressLines   = 20
	progressLineMax = 300
)

// progress keeps the end of a run's output, for a partial answer.
type progress struct {
	mu    sync.Mutex
	step  string   // the tool whose lines these are
	lines []string // the last progressLines, oldest first
	more  bool     // lines came before these
}

type progressKey struct{}

// progressOf is what verify.Request.Progress gets for a budgeted call:
// nil for any other.
func progressOf(ctx context.Context) func(tool, line string) {
	p, ok := ctx.Value(progressKey{}).(*progress)
	if !ok {
		return nil
	}
	return p.add
}

func (p *progress) add(tool, line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	if len(line) > progressLineMax {
		line = strings.ToValidUTF8(line[:progressLineMax], "") + " [...]"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if tool != p.step {
		p.step, p.more = tool, p.more || len(p.lines) > 0
		p.lines = p.lines[:0]
	}
	if len(p.lines) == progressLines {
		p.lines, p.more = append(p.lines[:0], p.lines[1:]...), true
	}
	p.lines = append(p.lines, line)
}

func (p *progress) tail() (string, []string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.step, append([]string(nil), p.lines...), p.more
}

// budgetNote tells the model, in a tool's description, what a call that
// outlives the budget answers: for Bash ("command"), the checks ("run"),
// BashOutput ("output") and KillShell ("kill"); empty without a budget.
func (s *Server) budgetNote(what string) string {
	if s.cfg.CallBudget <= 0 {
		return ""
	}
	switch what {
	case "output":
		return " The shell may also be a Bash command, or a run_tests, run_lint, run_typecheck or run_failing_tests run, that outlived its call's budget: such a run's output, once it has ended (status finished), is the report its call would have given."
	case "kill":
		return ", or a command or run that outlived its call's budget"
	case "command":
		return fmt.Sprintf(" A command still running after %s (the call budget) does not hold the call: the answer is its output so far, marked PARTIAL, and the ID of the background shell it goes on in, under its timeout; read the rest and its exit code with BashOutput, or stop it with KillShell.", s.cfg.CallBudget)
	}
	return fmt.Sprintf(" A run still going after %s (the call budget) does not hold the call: the answer is the end of its output so far, marked PARTIAL, and the ID of the background shell it goes on in; BashOutput on that ID gives the whole report once it has ended, and KillShell stops it. A timeout within the budget keeps the call to the end.", s.cfg.CallBudget)
}

// budgetInstructions adds the budget to the server's instructions; empty
// without one.
func (s *Server) budgetInstructions() string {
	if s.cfg.CallBudget <= 0 {
		return ""
	}
	return fmt.Sprintf(" No call holds you longer than %s: a Bash command or a test, lint or type-check run still going then answers with its output so far, marked PARTIAL, and goes on in the background as a shell; the answer says how to read the rest (BashOutput) or stop it (KillShell).", s.cfg.CallBudget)
}
