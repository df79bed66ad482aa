package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DecodeInput reads a hand-written input document — a CLI's --input file —
// as the payload of one hook call, so a hook can be run outside PromptKit
// with the stdin PromptKit would give it.
//
// For provider, tool and session hooks the document is an object holding the
// envelope keys the phase carries ("request", "response", "event"), each a
// JSON object. It may also hold "hook" and "phase", which must then agree
// with hook and phase, so a captured PromptKit stdin is accepted as is. Any
// other key, or a payload key the phase does not carry, is an error. For
// eval hooks the document is the eval result itself.
//
// Every object is decoded strictly: a key the payload type does not have is
// an error rather than silently dropped, since the hook would then see
// something other than what the author wrote. Key names match
// case-insensitively, as encoding/json matches them; the encoded stdin
// always uses PromptKit's spelling. A Message's "media_summary" is accepted
// and ignored, because PromptKit derives it on every encode.
//
// Errors start with "input: " and name the key, message index and field at
// fault. The returned payload always encodes: Stdin does not fail on it.
func DecodeInput(hook, phase string, data []byte) (*Payload, error) {
	p, err := decodeInput(hook, phase, data)
	if err != nil {
		return nil, &inputError{err}
	}
	return p, nil
}

// inputError is an error of DecodeInput. Its message quotes no more than
// maxQuote bytes of any one piece of the input (a key, a value), so a
// hostile document cannot make an error, and the log line or deny
// reason that repeats it, as large as itself.
type inputError struct{ err error }

func (e *inputError) Error() string { return "input: " + clipQuotes(e.err.Error(), maxQuote) }
func (e *inputError) Unwrap() error { return e.err }

// maxQuote bounds each quoted piece of the input in an error message.
const maxQuote = 64

// clipQuotes cuts every double-quoted run of msg longer than n bytes to
// its first n bytes (whole UTF-8 characters) and an ellipsis.
func clipQuotes(msg string, n int) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(msg, '"')
		if open < 0 {
			b.WriteString(msg)
			return b.String()
		}
		end := open + 1
		for end < len(msg) && msg[end] != '"' {
			if msg[end] == '\\' {
				end++
			}
			end++
		}
		b.WriteString(msg[:open+1])
		inner := msg[open+1 : min(end, len(msg))]
		if cut, clipped := clip([]byte(inner), n); clipped {
			inner = cut + "..."
		}
		b.WriteString(inner)
		if end >= len(msg) {
			return b.String()
		}
		b.WriteByte('"')
		msg = msg[end+1:]
	}
}

func decodeInput(hook, phase string, data []byte) (*Payload, error) {
	if err := checkHookPhase(hook, phase); err != nil {
		return nil, err
	}
	// The strict decoders copy what they read, several times over. They
	// check a skeleton of the document instead, its long strings cut
	// short; the values are then read from the document itself, without
	// copies. Whatever the skeleton does not pass is decoded whole, so an
	// error says exactly what it would have said.
	if utf8.Valid(data) {
		if skel, ok := scanDocument(data, elideOver); ok {
			if _, err := decodeChecked(hook, phase, skel); err == nil {
				if p, err := decodeLean(hook, phase, data); err == nil {
					return p, nil
				}
			}
		}
	}
	return decodeChecked(hook, phase, data)
}

// elideOver is the length past which the skeleton of a document has a
// string value as "" (keys are kept). "" decodes wherever the long string
// would, but as a timestamp, where it fails and the document is decoded
// whole: what the skeleton passes, the document passes.
const elideOver = 256

// decodeChecked decodes data with every check, and the copies they make.
func decodeChecked(hook, phase string, data []byte) (*Payload, error) {
	members, err := parseObject(data)
	if err != nil {
		return nil, err
	}
	p := &Payload{Hook: hook, Phase: phase}
	if hook == HookEval {
		var r EvalResult
		if err := checkFolded("eval result", data, reflect.TypeFor[EvalResult]()); err != nil {
			return nil, err
		}
		if err := decodeStrict(data, &r); err != nil {
			return nil, explain("eval result", err)
		}
		p.EvalResult = &r
	} else if err := decodeEnvelope(p, members); err != nil {
		return nil, err
	}
	if _, err := p.encode(); err != nil {
		return nil, fmt.Errorf("cannot be sent to the hook: %w", err)
	}
	return p, nil
}

// decodeEnvelope checks the document's keys against what p's phase carries,
// then decodes each payload object into p.
func decodeEnvelope(p *Payload, members map[string]json.RawMessage) error {
	wanted := envelopeKeys(p.Hook, p.Phase)
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		raw := members[name]
		switch {
		case name == "hook":
			if err := expectString(name, raw, p.Hook); err != nil {
				return err
			}
		case name == "phase":
			if err := expectString(name, raw, p.Phase); err != nil {
				return err
			}
		case slices.Contains(wanted, name):
		case name == keyRequest || name == keyResponse || name == keyEvent:
			return fmt.Errorf("%s does not take %q", p.call(), name)
		default:
			return fmt.Errorf("unknown key %q (keys for %s: %s)", name, p.call(), strings.Join(append([]string{"hook", "phase"}, wanted...), ", "))
		}
	}
	for _, key := range wanted {
		raw, ok := members[key]
		if !ok {
			return fmt.Errorf("%s needs %s object", p.call(), withArticle(strconv.Quote(key)))
		}
		if !isObject(raw) {
			return fmt.Errorf("%q must be a JSON object, got %s", key, jsonKind(raw))
		}
		if err := decodePayloadObject(p, key, raw); err != nil {
			return err
		}
	}
	return nil
}

// expectString checks that the optional "hook" or "phase" key agrees with
// the call being decoded.
func expectString(name string, raw json.RawMessage, want string) error {
	var got string
	if jsonKind(raw) != "a string" || json.Unmarshal(raw, &got) != nil {
		return fmt.Errorf("%q must be a string, got %s", name, jsonKind(raw))
	}
	if got != want {
		return fmt.Errorf("%q is %q, want %q", name, got, want)
	}
	return nil
}

// decodePayloadObject decodes the object under key into the Payload field
// that p's hook type keeps there.
func decodePayloadObject(p *Payload, key string, raw json.RawMessage) error {
	if t := payloadType(p.Hook, key); t != nil {
		if err := checkFolded(key, raw, t); err != nil {
			return err
		}
	}
	switch {
	case p.Hook == HookProvider && key == keyRequest:
		// Messages are decoded one by one so an error can say which.
		var in struct {
			ProviderRequest
			Messages []json.RawMessage
		}
		if err := decodeStrict(raw, &in); err != nil {
			return explain(key, err)
		}
		msgs, err := decodeMessages(key, in.Messages)
		if err != nil {
			return err
		}
		in.ProviderRequest.Messages = msgs
		p.ProviderRequest = &in.ProviderRequest
	case p.Hook == HookProvider && key == keyResponse:
		var in struct {
			ProviderResponse
			Message json.RawMessage
		}
		if err := decodeStrict(raw, &in); err != nil {
			return explain(key, err)
		}
		if in.Message != nil {
			if err := json.Unmarshal(in.Message, &in.ProviderResponse.Message); err != nil {
				return explain(key+": Message", err)
			}
		}
		p.ProviderResponse = &in.ProviderResponse
	case p.Hook == HookTool && key == keyRequest:
		var r ToolRequest
		if err := decodeStrict(raw, &r); err != nil {
			return explain(key, err)
		}
		p.ToolRequest = &r
	case p.Hook == HookTool && key == keyResponse:
		var r ToolResponse
		if err := decodeStrict(raw, &r); err != nil {
			return explain(key, err)
		}
		p.ToolResponse = &r
	case p.Hook == HookSession && key == keyEvent:
		var in struct {
			SessionEvent
			Messages []json.RawMessage
		}
		if err := decodeStrict(raw, &in); err != nil {
			return explain(key, err)
		}
		msgs, err := decodeMessages(key, in.Messages)
		if err != nil {
			return err
		}
		in.SessionEvent.Messages = msgs
		p.SessionEvent = &in.SessionEvent
	default:
		return fmt.Errorf("%s does not take %q", p.call(), key)
	}
	return nil
}

// decodeMessages decodes a Messages array element by element, keeping a
// null array nil and an empty one empty: the two encode differently.
func decodeMessages(where string, raws []json.RawMessage) ([]Message, error) {
	if raws == nil {
		return nil, nil
	}
	msgs := make([]Message, len(raws))
	for i, raw := range raws {
		if jsonKind(raw) == "null" {
			// PromptKit never sends one; a hook could not tell it from an
			// empty message.
			return nil, fmt.Errorf("%s: Messages[%d]: null is not a message", where, i)
		}
		if err := json.Unmarshal(raw, &msgs[i]); err != nil {
			return nil, explain(fmt.Sprintf("%s: Messages[%d]", where, i), err)
		}
	}
	return msgs, nil
}

// payloadType is the type the object under key of a hook's payload is
// decoded into; nil for a key the hook does not take.
func payloadType(hook, key string) reflect.Type {
	switch {
	case hook == HookProvider && key == keyRequest:
		return reflect.TypeFor[ProviderRequest]()
	case hook == HookProvider && key == keyResponse:
		return reflect.TypeFor[ProviderResponse]()
	case hook == HookTool && key == keyRequest:
		return reflect.TypeFor[ToolRequest]()
	case hook == HookTool && key == keyResponse:
		return reflect.TypeFor[ToolResponse]()
	case hook == HookSession && key == keyEvent:
		return reflect.TypeFor[SessionEvent]()
	}
	return nil
}

// checkFolded refuses two keys of one object that encoding/json takes for
// one field of t (see foldedDuplicate); where names the object.
func checkFolded(where string, raw []byte, t reflect.Type) error {
	d := foldedDuplicate(raw, t)
	if d == nil {
		return nil
	}
	if d.path != "" {
		d.path = where + "." + d.path
	} else {
		d.path = where
	}
	return d
}
