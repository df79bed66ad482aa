package shells

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func (m *Manager) runForeground(ctx context.Context, c Command, timeout time.Duration) (string, error) {
	stdout, stderr := m.newCapture(), m.newCapture()
	// A command that may outlive the budget may outlive the call: it
	// starts on a context of its own, and awaitBudget stops it when ctx
	// ends. One whose timeout comes first runs as it always has.
	detachable := m.opts.Budget > 0 && timeout > m.opts.Budget
	startCtx := ctx
	if detachable {
		startCtx = context.Background()
	}
	m.mu.Lock()
	p, err := m.start(startCtx, c, timeout, stdout, stderr)
	if err == nil {
		m.fg[p] = struct{}{}
		m.fgWG.Add(1)
	}
	m.mu.Unlock()
	if err != nil {
		return "", err
	}
	if detachable {
		if text, detached := m.awaitBudget(ctx, p, c, timeout, stdout, stderr); detached {
			return text, nil
		}
	}
	_, werr := p.Wait()
	m.mu.Lock()
	delete(m.fg, p)
	m.mu.Unlock()
	m.fgWG.Done()

	var status string
	var xe *sandbox.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &xe):
		status = "Exit code: " + exitCode(xe)
	case ctx.Err() != nil:
		// The caller gave up; nobody is waiting for output.
		return "", fmt.Errorf("bash: %w", werr)
	case sandbox.KindOf(werr) == sandbox.KindTimeout:
		status = fmt.Sprintf("Command timed out after %s", timeout)
	case sandbox.KindOf(werr) == sandbox.KindCanceled:
		return "", fmt.Errorf("bash: stopped because the shell manager is closing: %w", werr)
	default:
		return "", fmt.Errorf("bash: %w", werr)
	}

	out, errOut := stdout.finish(), stderr.finish()
	ob, eb := fit(out, errOut, m.opts.MaxOutput)
	var errText string
	if errOut.total > 0 {
		errText = "--- stderr ---\n" + errOut.render(eb)
	}
	return joinLines(out.render(ob), errText, status), nil
}

func exitCode(xe *sandbox.ExitError) string {
	if xe.Signal != "" {
		return fmt.Sprintf("%d (killed by signal: %s)", xe.Code, xe.Signal)
	}
	return fmt.Sprint(xe.Code)
}

// joinLines concatenates the non-empty parts, starting each on a new
// line.
func joinLines(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	return b.String()
}
