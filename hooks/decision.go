package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
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
// a deny reason: enough for a traceback's last lines, not a log dump.
const maxStderrInReason = 1024

// decide turns one filter hook's outcome into a Decision. Anything but a
// clean exit with a well-formed verdict saying "allow": true is a deny: the
// filter is fail-closed, so a broken hook can never wave a request through.
func decide(hookName string, resp sandbox.Response, err error) Decision {
	if err != nil {
		return Decision{Reason: fmt.Sprintf("hook %q %s%s", hookName, failureText(err), stderrSuffix(resp.Stderr))}
	}
	v, perr := wire.ParseVerdict(resp.Stdout)
	if perr != nil {
		return Decision{Reason: fmt.Sprintf("hook %q %s%s", hookName, verdictFailureText(perr, resp.StdoutTruncated), stderrSuffix(resp.Stderr))}
	}
	if v.Allow {
		return Decision{Allow: true, Reason: v.Reason, Metadata: v.Metadata}
	}
	reason := v.Reason
	if reason == "" {
		reason = fmt.Sprintf("hook %q denied the request without giving a reason", hookName)
	}
	return Decision{Reason: reason, Enforced: v.Enforced, Metadata: v.Metadata}
}

// failureText says in a few words why a spawn failed, by error kind.
func failureText(err error) string {
	var xe *sandbox.ExitError
	switch {
	case errors.As(err, &xe):
		return "failed: " + xe.Error()
	case errors.Is(err, sandbox.ErrTimeout):
		return "failed: " + err.Error()
	case errors.Is(err, sandbox.ErrStart):
		return "could not start: " + err.Error()
	case errors.Is(err, sandbox.ErrTransport):
		return "failed in its sandbox: " + err.Error()
	case errors.Is(err, sandbox.ErrCanceled):
		return "was cancelled: " + err.Error()
	}
	return "failed: " + err.Error()
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

// stderrSuffix quotes the start of a hook's stderr for a deny reason,
// trimmed and cut at a rune boundary so the reason stays valid UTF-8.
func stderrSuffix(stderr []byte) string {
	s := bytes.TrimSpace(stderr)
	if len(s) == 0 {
		return ""
	}
	if len(s) <= maxStderrInReason {
		return fmt.Sprintf(" (stderr: %s)", s)
	}
	cut := maxStderrInReason
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf(" (stderr: %s… [%d more bytes])", s[:cut], len(s)-cut)
}
