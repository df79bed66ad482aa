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
//
// An error that quotes a piece of stdout (data after the verdict, a value
// of the wrong type) shows its first 40 bytes or so.
func ParseVerdict(stdout []byte) (Verdict, error) {
	return ParseVerdictQuoting(stdout, clip)
}

// A Quoter renders the start of piece, a part of a hook's stdout, for an
// error message: at most about n bytes of it, and whether it left
// anything out.
type Quoter func(piece []byte, n int) (excerpt string, cut bool)

// ParseVerdictQuoting is ParseVerdict with the pieces of stdout its
// errors quote rendered by quote, which gets each piece whole: a caller
// that must keep secrets out of the message scrubs the piece before it
// cuts it, so a secret across the cut is not half shown. encoding/json's
// own messages are kept as they are; they name at most one character of
// the output, or a number literal too large for a float64. A nil quote
// is ParseVerdict's.
func ParseVerdictQuoting(stdout []byte, quote Quoter) (Verdict, error) {
	if quote == nil {
		quote = clip
	}
	q := verdictQuoter(quote)
	data := bytes.TrimSpace(stdout)
	if len(data) == 0 {
		return Verdict{}, ErrEmptyVerdict
	}
	if !json.Valid(data) {
		return Verdict{}, invalidVerdict("%s", describeInvalid(data, q))
	}
	if !isObject(data) {
		return Verdict{}, invalidVerdict("want a JSON object, got %s", jsonKind(data))
	}
	if k, dup := duplicateKey(data, true); dup {
		// Decoders disagree on which of the two counts: a filter fails
		// closed rather than pick one.
		key, _ := json.Marshal(k)
		return Verdict{}, invalidVerdict("key %s appears twice in one object (keys of the verdict itself count as the same regardless of case)", q.json(key))
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
	if err := verdictBool("allow", allow, &v.Allow, false, q); err != nil {
		return Verdict{}, err
	}
	if err := verdictBool("enforced", members["enforced"], &v.Enforced, true, q); err != nil {
		return Verdict{}, err
	}
	if err := verdictBool("ack", members["ack"], &v.Ack, true, q); err != nil {
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
func verdictBool(name string, raw json.RawMessage, dst *bool, optional bool, q verdictQuoter) error {
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
	return invalidVerdict("%s must be a boolean (true or false), got %s (%s)", name, q.json(raw), jsonKind(raw))
}

// describeInvalid says what is wrong with data, which is not valid JSON:
// either a clean value followed by something else, or broken JSON.
func describeInvalid(data []byte, q verdictQuoter) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var first json.RawMessage
	if err := dec.Decode(&first); err == nil {
		return fmt.Sprintf("unexpected data after the JSON value: %q", q.clip(bytes.TrimSpace(data[dec.InputOffset():])))
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

// clipLen bounds how much of a piece of a hook's output an error message
// repeats.
const clipLen = 40

// clip is the Quoter of ParseVerdict: it cuts piece to n bytes or fewer,
// on a character boundary.
func clip(piece []byte, n int) (string, bool) {
	if len(piece) <= n {
		return string(piece), false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(piece[cut]) {
		cut--
	}
	return string(piece[:cut]), true
}

// verdictQuoter renders the pieces of stdout in ParseVerdict's errors.
type verdictQuoter Quoter

// clip renders b in about clipLen bytes, marking a cut with "...".
func (q verdictQuoter) clip(b []byte) string {
	s, cut := q(b, clipLen)
	if cut {
		s += "..."
	}
	return s
}

// json renders a valid JSON value compactly for an error message.
func (q verdictQuoter) json(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return q.clip(raw)
	}
	return q.clip(buf.Bytes())
}
