package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Verdict is what a hook prints on stdout. For a filter hook, Allow decides
// whether the call goes ahead. On a deny, Enforced tells PromptKit the hook
// has already acted on the content (an enforced decision) rather than only
// objecting, and Reason and Metadata travel with the decision. Ack lets a
// hook acknowledge an event; PromptKit's filter decision does not read it.
type Verdict struct {
	Allow    bool           `json:"allow"`
	Reason   string         `json:"reason,omitempty"`
	Enforced bool           `json:"enforced,omitempty"`
	Ack      bool           `json:"ack,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Why ParseVerdict refused a hook's output. A filter hook is fail-closed, so
// every one of these means deny; they are distinct so that the deny reason
// can say which mistake the hook made.
var (
	ErrEmptyVerdict   = errors.New("hook printed no verdict")
	ErrNoAllow        = errors.New(`hook verdict has no "allow" key`)
	ErrInvalidVerdict = errors.New("invalid hook verdict")
)

// ParseVerdict reads a hook's stdout strictly: exactly one JSON object,
// surrounded by nothing but whitespace, whose "allow" is a JSON boolean.
// PromptKit would read "allow": "true" as a decode error and a missing allow
// as false; both are errors here so the reason for a deny is visible. The
// optional keys must have their declared types when present (null counts as
// absent); keys this type does not know are ignored, so hooks can add their
// own. Numbers in Metadata decode as float64, as they do in PromptKit.
func ParseVerdict(stdout []byte) (Verdict, error) {
	data := bytes.TrimSpace(stdout)
	if len(data) == 0 {
		return Verdict{}, ErrEmptyVerdict
	}
	if !json.Valid(data) {
		return Verdict{}, invalidVerdict("%s", describeInvalid(data))
	}
	if !isObject(data) {
		return Verdict{}, invalidVerdict("want a JSON object, got %s", jsonKind(data))
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return Verdict{}, invalidVerdict("%v", err)
	}

	var v Verdict
	allow, ok := members["allow"]
	if !ok {
		return Verdict{}, ErrNoAllow
	}
	if err := verdictBool("allow", allow, &v.Allow, false); err != nil {
		return Verdict{}, err
	}
	if err := verdictBool("enforced", members["enforced"], &v.Enforced, true); err != nil {
		return Verdict{}, err
	}
	if err := verdictBool("ack", members["ack"], &v.Ack, true); err != nil {
		return Verdict{}, err
	}
	if raw := members["reason"]; raw != nil && jsonKind(raw) != "null" {
		if jsonKind(raw) != "a string" {
			return Verdict{}, invalidVerdict("reason must be a string, got %s", jsonKind(raw))
		}
		if err := json.Unmarshal(raw, &v.Reason); err != nil {
			return Verdict{}, invalidVerdict("reason: %v", err)
		}
	}
	if raw := members["metadata"]; raw != nil && jsonKind(raw) != "null" {
		if !isObject(raw) {
			return Verdict{}, invalidVerdict("metadata must be an object, got %s", jsonKind(raw))
		}
		if err := json.Unmarshal(raw, &v.Metadata); err != nil {
			return Verdict{}, invalidVerdict("metadata: %v", err)
		}
	}
	return v, nil
}

// verdictBool decodes a boolean member into dst. raw is nil when the key is
// absent; optional members may be absent or null.
func verdictBool(name string, raw json.RawMessage, dst *bool, optional bool) error {
	switch {
	case raw == nil, optional && jsonKind(raw) == "null":
		return nil
	case bytes.Equal(raw, []byte("true")):
		*dst = true
		return nil
	case bytes.Equal(raw, []byte("false")):
		*dst = false
		return nil
	}
	return invalidVerdict("%s must be a boolean (true or false), got %s (%s)", name, showJSON(raw), jsonKind(raw))
}

// describeInvalid says what is wrong with data, which is not valid JSON:
// either a clean value followed by something else, or broken JSON.
func describeInvalid(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var first json.RawMessage
	if err := dec.Decode(&first); err == nil {
		return fmt.Sprintf("unexpected data after the JSON value: %q", clip(bytes.TrimSpace(data[dec.InputOffset():])))
	}
	var raw any
	err := json.Unmarshal(data, &raw)
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return describeSyntaxError(data, syntaxErr)
	}
	return fmt.Sprintf("invalid JSON: %v", err)
}

func invalidVerdict(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidVerdict}, args...)...)
}

// clipLen bounds how much of a hook's output an error message repeats.
const clipLen = 40

// clip cuts b to about clipLen bytes, on a character boundary, marking the
// cut with "...".
func clip(b []byte) string {
	if len(b) <= clipLen {
		return string(b)
	}
	cut := clipLen
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + "..."
}

// showJSON renders a valid JSON value compactly for an error message.
func showJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return clip(raw)
	}
	return clip(buf.Bytes())
}
