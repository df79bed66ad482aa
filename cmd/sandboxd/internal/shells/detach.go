package shells

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// awaitBudget waits for a foreground command that may outlive its call:
// started on a context of its own, it is stopped here when ctx ends (as
// a timeout would stop it), and handed over to a background shell once
// Options.Budget has passed. It returns the call's answer and true when
// it did hand it over; false means the process has ended or been
// stopped, and Wait collects it.
func (m *Manager) awaitBudget(ctx context.Context, p *shell.Process, c Command, timeout time.Duration, stdout, stderr *capture) (string, bool) {
	exited := make(chan struct{})
	go func() {
		_, _ = p.Wait()
		close(exited)
	}()
	budget := time.NewTimer(m.opts.Budget)
	defer budget.Stop()
	select {
	case <-exited:
		return "", false
	case <-ctx.Done():
		p.Stop()
		return "", false
	case <-budget.C:
	}
	select {
	case <-exited: // ended as the budget ran out: answer as usual
		return "", false
	default:
	}
	m.mu.Lock()
	if m.closed {
		// Close has stopped it; Wait reports that.
		m.mu.Unlock()
		return "", false
	}
	sh := m.newShell(c.Owner, c.Description, nil)
	sh.proc, sh.timeout = p, timeout
	out, errOut := stdout.detach(sh.stdout), stderr.detach(sh.stderr)
	delete(m.fg, p)
	m.fgWG.Done()
	m.shells[sh.id] = sh
	m.mu.Unlock()
	go m.reap(sh)
	return m.partial(sh.id, timeout, out, errOut), true
}

// partial is the answer of a call whose command went on in the
// background: its output so far, between a first line that says it is
// partial and a last one that says what to call next.
func (m *Manager) partial(id string, timeout time.Duration, out, errOut clip) string {
	ob, eb := fit(out, errOut, m.opts.MaxOutput)
	var errText string
	if errOut.total > 0 {
		errText = "--- stderr ---\n" + errOut.render(eb)
	}
	head := fmt.Sprintf("[PARTIAL OUTPUT: the command is still running after %s, the call budget, and goes on in the background as shell %s. Its output so far:]", m.opts.Budget, id)
	next := fmt.Sprintf("[NOT FINISHED. Next: call BashOutput with bash_id %q for what it prints from now on and, once it has ended, its exit code; call it again while the status is \"running\". To stop it, call KillShell with shell_id %q. Its timeout still applies: it is killed %s after it started.]", id, id, timeout)
	body := out.render(ob)
	if out.total == 0 && errOut.total == 0 {
		body = "(no output yet)"
	}
	return joinLines(head, body, errText, next)
}

// job is a tool call's work that the call handed over to the manager when
// it outlived its budget: a background shell without a process of its
// own, whose output is what the call would have answered.
type job struct {
	cancel  func() // tells the work to stop; it must then end soon
	stopped atomic.Bool
	ended   chan struct{} // closed by finish
	status  string        // set by finish, before ended is closed
}

func (j *job) stop() {
	j.stopped.Store(true)
	j.cancel()
}

func (j *job) wait() (string, int) {
	<-j.ended
	return j.status, -1
}

// errJobEnded is a job's second finish.
var errJobEnded = errors.New("the job has already finished")

// Adopt makes a tool call's unfinished work a background shell of owner,
// described by description: BashOutput reads it and KillShell stops it as
// any other, and it counts as one (it is not refused when MaxBackground
// are running: the work has been running all along). stop must make the
// work end soon (cancel its context, which kills its processes).
//
// The work reports its end with finish, once: the text it would have
// answered, or the error, which BashOutput then shows as the shell's
// output (scrubbed, like all output) under the status "finished" or
// "failed"; after a stop the status is "killed" and the output dropped.
func (m *Manager) Adopt(owner, description string, stop func()) (string, func(text string, err error) error, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", nil, errClosed
	}
	j := &job{cancel: stop, ended: make(chan struct{})}
	sh := m.newShell(owner, description, nil)
	sh.job = j
	sh.stdout.rel, sh.stderr.rel = m.newReleaser(), m.newReleaser()
	m.shells[sh.id] = sh
	go m.reap(sh)
	var once sync.Once
	finish := func(text string, err error) error {
		ended := errJobEnded
		once.Do(func() {
			ended = nil
			switch {
			case j.stopped.Load():
				j.status = "killed"
			case err != nil:
				j.status = "failed"
				_, _ = sh.stdout.Write([]byte(err.Error()))
			default:
				j.status = "finished"
				_, _ = sh.stdout.Write([]byte(text))
			}
			close(j.ended)
		})
		return ended
	}
	return sh.id, finish, nil
}
