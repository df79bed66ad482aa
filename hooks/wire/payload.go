package wire

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Payload is one hook call: which hook and phase, and the objects PromptKit
// hands the hook for it. Only the fields the hook and phase use may be set —
// see Stdin.
type Payload struct {
	Hook, Phase      string
	ProviderRequest  *ProviderRequest
	ProviderResponse *ProviderResponse
	ToolRequest      *ToolRequest
	ToolResponse     *ToolResponse
	SessionEvent     *SessionEvent
	EvalResult       *EvalResult
}

// envelope is the stdin document of every hook type but eval. The payload
// slots are interfaces, as in PromptKit, so an unset slot is a nil interface
// and is left out; a slot holding a nil pointer would be written as null.
type envelope struct {
	Hook     string `json:"hook"`
	Phase    string `json:"phase"`
	Request  any    `json:"request,omitempty"`
	Response any    `json:"response,omitempty"`
	Event    any    `json:"event,omitempty"`
}

// Envelope keys a payload object goes under.
const (
	keyRequest  = "request"
	keyResponse = "response"
	keyEvent    = "event"
)

// envelopeKeys returns the payload keys PromptKit writes for hook and phase,
// in envelope order. Eval has none: its result is the whole document.
func envelopeKeys(hook, phase string) []string {
	switch {
	case hook == HookProvider && phase == PhaseAfterCall,
		hook == HookTool && phase == PhaseAfterExecution:
		return []string{keyRequest, keyResponse}
	case hook == HookProvider, hook == HookTool:
		return []string{keyRequest}
	case hook == HookSession:
		return []string{keyEvent}
	}
	return nil
}

// slot is one Payload field: the hook type it belongs to, the envelope key
// it is written under ("" for the eval result) and its value.
type slot struct {
	field, hook, key string
	set              bool
	value            any
}

func (p *Payload) slots() []slot {
	return []slot{
		{"ProviderRequest", HookProvider, keyRequest, p.ProviderRequest != nil, p.ProviderRequest},
		{"ProviderResponse", HookProvider, keyResponse, p.ProviderResponse != nil, p.ProviderResponse},
		{"ToolRequest", HookTool, keyRequest, p.ToolRequest != nil, p.ToolRequest},
		{"ToolResponse", HookTool, keyResponse, p.ToolResponse != nil, p.ToolResponse},
		{"SessionEvent", HookSession, keyEvent, p.SessionEvent != nil, p.SessionEvent},
		{"EvalResult", HookEval, "", p.EvalResult != nil, p.EvalResult},
	}
}

// Stdin returns exactly the bytes PromptKit writes to the hook's stdin for
// this call: the envelope {"hook","phase",...} with the objects the phase
// carries, or, for an eval hook, the eval result on its own. A payload whose
// hook or phase does not exist, that lacks an object its phase needs, or
// that carries one the phase does not, is an error: PromptKit could not
// have sent it.
func (p *Payload) Stdin() ([]byte, error) {
	if p == nil {
		return nil, errors.New("wire: nil payload")
	}
	b, err := p.encode()
	if err != nil {
		return nil, fmt.Errorf("wire: %w", err)
	}
	return b, nil
}

func (p *Payload) encode() ([]byte, error) {
	if err := checkHookPhase(p.Hook, p.Phase); err != nil {
		return nil, err
	}
	keys := envelopeKeys(p.Hook, p.Phase)
	env := envelope{Hook: p.Hook, Phase: p.Phase}
	var doc any = &env
	for _, s := range p.slots() {
		wanted := s.hook == p.Hook && (s.key == "" || slices.Contains(keys, s.key))
		switch {
		case wanted && !s.set:
			return nil, fmt.Errorf("%s payload needs %s", p.call(), withArticle(s.field))
		case !wanted && s.set:
			return nil, fmt.Errorf("%s payload cannot carry %s", p.call(), withArticle(s.field))
		case !wanted:
			continue
		}
		switch s.key {
		case keyRequest:
			env.Request = s.value
		case keyResponse:
			env.Response = s.value
		case keyEvent:
			env.Event = s.value
		default:
			doc = s.value
		}
	}
	b, err := marshalExact(func(s *jsonSink) error {
		if env, ok := doc.(*envelope); ok {
			return env.encode(s)
		}
		return encodeValue(s, reflect.ValueOf(doc))
	})
	if err != nil {
		return nil, fmt.Errorf("encoding %s payload: %w", p.call(), err)
	}
	return b, nil
}

// encode writes the envelope as json.Marshal would.
func (env *envelope) encode(s *jsonSink) error {
	s.WriteString(`{"hook":`)
	if err := encodeString(s, env.Hook); err != nil {
		return err
	}
	s.WriteString(`,"phase":`)
	if err := encodeString(s, env.Phase); err != nil {
		return err
	}
	for _, slot := range []struct {
		key   string
		value any
	}{{`,"request":`, env.Request}, {`,"response":`, env.Response}, {`,"event":`, env.Event}} {
		if slot.value == nil {
			continue
		}
		s.WriteString(slot.key)
		if err := encodeValue(s, reflect.ValueOf(slot.value)); err != nil {
			return err
		}
	}
	s.WriteString("}")
	return nil
}

// call names the hook call in messages: "provider after_call", "eval".
func (p *Payload) call() string {
	return callName(p.Hook, p.Phase)
}

func callName(hook, phase string) string {
	if phase == "" {
		return hook
	}
	return hook + " " + phase
}

// withArticle prefixes a name, quoted or not, with "a" or "an".
func withArticle(name string) string {
	if first := strings.TrimLeft(name, `"`); first != "" && strings.ContainsRune("AEIOUaeiou", rune(first[0])) {
		return "an " + name
	}
	return "a " + name
}
