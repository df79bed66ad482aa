package hooks

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
)

// Decision is the outcome of running hooks on one event, in the shape
// PromptKit's own hooks return: allowed, or denied with a reason; Enforced
// says the hook already applied its fix (the pipeline records it and goes
// on); Metadata is whatever the hook attached.
type Decision struct {
	Allow    bool           `json:"allow"`
	Reason   string         `json:"reason"`
	Enforced bool           `json:"enforced"`
	Metadata map[string]any `json:"metadata"`
}

// Allow is the decision of a hook that had no objection.
var Allow = Decision{Allow: true}

// maxStderrInReason bounds how much of a failing hook's stderr is quoted in
// a deny reason (and of a hook's own reason in the runtime's log): enough
// for a traceback's last lines, not a log dump.
const maxStderrInReason = 1024

// decide turns one filter hook's outcome into a Decision. Anything but a
// clean exit with a well-formed verdict saying "allow": true is a deny: the
// filter is fail-closed, so a broken hook can never wave a request through.
//
// What a deny reason quotes of the hook's output, or of its sandbox's
// error, goes through sc. A verdict's own reason is the hook's answer and
// the decision carries it as written, as PromptKit does; logged is the
// reason as the runtime may log it, where that one is scrubbed too. o is
// how the call counts in the metrics.
func decide(hookName string, resp sandbox.Response, err error, sc *scrub.Scrubber) (d Decision, logged string, o metrics.Outcome) {
	if err != nil {
		d.Reason = fmt.Sprintf("hook %q %s%s", hookName, failureText(err, sc), stderrSuffix(resp, sc))
		return d, d.Reason, spawnOutcome(err)
	}
	v, perr := wire.ParseVerdictQuoting(resp.Stdout, func(piece []byte, n int) (string, bool) {
		return sc.Excerpt(string(piece), n, resp.StdoutTruncated)
	})
	if perr != nil {
		d.Reason = fmt.Sprintf("hook %q %s%s", hookName, verdictFailureText(perr, resp.StdoutTruncated), stderrSuffix(resp, sc))
		return d, d.Reason, metrics.Failed
	}
	if v.Allow {
		return Decision{Allow: true, Reason: v.Reason, Metadata: v.Metadata}, "", metrics.Allowed
	}
	d = Decision{Reason: v.Reason, Enforced: v.Enforced, Metadata: v.Metadata}
	if v.Reason == "" {
		d.Reason = fmt.Sprintf("hook %q denied the request without giving a reason", hookName)
		return d, d.Reason, metrics.Denied
	}
	logged, cut := sc.Excerpt(v.Reason, maxStderrInReason, false)
	if cut {
		logged += fmt.Sprintf("… [%d bytes in all]", len(v.Reason))
	}
	return d, logged, metrics.Denied
}

// spawnOutcome is the outcome of a hook whose sandbox returned err: a
// timeout, or a failure of another kind.
func spawnOutcome(err error) metrics.Outcome {
	switch {
	case err == nil:
		return metrics.Allowed
	case errors.Is(err, sandbox.ErrTimeout):
		return metrics.TimedOut
	}
	return metrics.Failed
}

// failureText says in a few words why a spawn failed, by error kind, and
// quotes the sandbox's error scrubbed: a backend's message can carry its
// own tools' output.
func failureText(err error, sc *scrub.Scrubber) string {
	msg := sc.String(err.Error())
	var xe *sandbox.ExitError
	switch {
	case errors.As(err, &xe):
		return "failed: " + msg
	case errors.Is(err, sandbox.ErrTimeout):
		return "failed: " + msg
	case errors.Is(err, sandbox.ErrStart):
		return "could not start: " + msg
	case errors.Is(err, sandbox.ErrTransport):
		return "failed in its sandbox: " + msg
	case errors.Is(err, sandbox.ErrCanceled):
		return "was cancelled: " + msg
	}
	return "failed: " + msg
}

func verdictFailureText(err error, truncated bool) string {
	switch {
	case errors.Is(err, wire.ErrEmptyVerdict):
		return "printed no verdict on stdout"
	case errors.Is(err, wire.ErrNoAllow):
		return `printed a verdict without "allow"`
	case truncated:
		return "printed more than the output limit; verdict unreadable: " + err.Error()
	}
	return "printed an invalid verdict: " + err.Error()
}

// stderrSuffix quotes the start of a hook's stderr for a deny reason.
func stderrSuffix(resp sandbox.Response, sc *scrub.Scrubber) string {
	if s := stderrExcerpt(resp, sc); s != "" {
		return " (stderr: " + s + ")"
	}
	return ""
}

// stderrExcerpt is the start of a hook's stderr, trimmed, scrubbed and
// cut to maxStderrInReason bytes at a rune boundary, so it stays valid
// UTF-8 when the output is. A cut says how long the stderr was: its
// length as captured, or more when the capture stopped at the output
// limit.
func stderrExcerpt(resp sandbox.Response, sc *scrub.Scrubber) string {
	s := bytes.TrimSpace(resp.Stderr)
	if len(s) == 0 {
		return ""
	}
	// When the capture was cut short, trimming it can only move its end
	// back within the same secret, whose start is still caught.
	excerpt, cut := sc.Excerpt(string(s), maxStderrInReason, resp.StderrTruncated)
	switch {
	case resp.StderrTruncated:
		return fmt.Sprintf("%s… [over %d bytes]", excerpt, len(resp.Stderr))
	case cut:
		return fmt.Sprintf("%s… [%d bytes in all]", excerpt, len(resp.Stderr))
	}
	return excerpt
}
