package wire

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The lean decoders read a document that decodeChecked has already passed
// (through its skeleton: see decodeInput) into the same Payload, but with
// json.Unmarshal on sub-slices of the document rather than json.Decoder,
// which copies its input into a buffer of its own, and without
// json.RawMessage, which copies too. A long string is then copied once,
// into the decoded value.
//
// json.Unmarshal has no UseNumber: every field that holds numbers in an
// interface value is decoded through useNumber, by the strict decoder, on
// its own bytes. TestLeanShadowsEveryInterface keeps that list complete.

var errLean = errors.New("not decodable by the lean decoders")

// decodeLean decodes data, which decodeChecked accepts, into a Payload.
func decodeLean(hook, phase string, data []byte) (*Payload, error) {
	p := &Payload{Hook: hook, Phase: phase}
	if hook == HookEval {
		var in struct {
			EvalResult
			Value      useNumber[any]             `json:"value,omitempty"`
			Details    useNumber[map[string]any]  `json:"details,omitempty"`
			Violations useNumber[[]EvalViolation] `json:"violations,omitempty"`
		}
		if err := json.Unmarshal(data, &in); err != nil {
			return nil, err
		}
		in.EvalResult.Value = in.Value.v
		in.EvalResult.Details = in.Details.v
		in.EvalResult.Violations = in.Violations.v
		p.EvalResult = &in.EvalResult
		return p, nil
	}
	members, ok := objectMembers(data)
	if !ok {
		return nil, errLean
	}
	for _, key := range envelopeKeys(hook, phase) {
		var raw []byte
		for _, m := range members {
			if m.key == key {
				raw = m.value
			}
		}
		if raw == nil {
			return nil, errLean
		}
		if err := decodePayloadLean(p, key, raw); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// decodePayloadLean is decodePayloadObject for the lean decoders.
func decodePayloadLean(p *Payload, key string, raw []byte) error {
	switch {
	case p.Hook == HookProvider && key == keyRequest:
		var in struct {
			ProviderRequest
			Messages leanMessages
			Metadata useNumber[map[string]any]
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return err
		}
		in.ProviderRequest.Messages = in.Messages
		in.ProviderRequest.Metadata = in.Metadata.v
		p.ProviderRequest = &in.ProviderRequest
	case p.Hook == HookProvider && key == keyResponse:
		var in struct {
			ProviderResponse
			Message leanMessage
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return err
		}
		in.ProviderResponse.Message = Message(in.Message)
		p.ProviderResponse = &in.ProviderResponse
	case p.Hook == HookTool && key == keyRequest:
		var r ToolRequest
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		p.ToolRequest = &r
	case p.Hook == HookTool && key == keyResponse:
		var r ToolResponse
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		p.ToolResponse = &r
	case p.Hook == HookSession && key == keyEvent:
		var in struct {
			SessionEvent
			Messages leanMessages
			Metadata useNumber[map[string]any]
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return err
		}
		in.SessionEvent.Messages = in.Messages
		in.SessionEvent.Metadata = in.Metadata.v
		p.SessionEvent = &in.SessionEvent
	default:
		return errLean
	}
	return nil
}

// useNumber decodes the value under its key strictly, numbers in
// interface values kept as json.Number, from the bytes json.Unmarshal
// hands it.
type useNumber[T any] struct{ v T }

func (u *useNumber[T]) UnmarshalJSON(data []byte) error {
	return decodeStrict(data, &u.v)
}

// leanMessages decodes a Messages array message by message, with the
// lean decoder. Like decodeMessages it keeps null nil and [] empty, and it
// refuses a null message.
type leanMessages []Message

func (ms *leanMessages) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		*ms = nil
		return nil
	}
	elems, ok := arrayElements(data)
	if !ok {
		return errLean
	}
	msgs := make([]Message, len(elems))
	for i, elem := range elems {
		if bytes.Equal(elem, []byte("null")) {
			return errLean
		}
		if err := decodeMessageLean(elem, &msgs[i]); err != nil {
			return err
		}
	}
	*ms = msgs
	return nil
}

// leanMessage is a Message decoded by the lean decoder.
type leanMessage Message

func (m *leanMessage) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		return nil
	}
	return decodeMessageLean(data, (*Message)(m))
}

// decodeMessageLean is Message.UnmarshalJSON for the lean decoders.
func decodeMessageLean(data []byte, m *Message) error {
	var in struct {
		messageFields
		Meta         useNumber[map[string]any]     `json:"meta"`
		Validations  useNumber[[]ValidationResult] `json:"validations"`
		MediaSummary ignored                       `json:"media_summary"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	in.messageFields.Meta = in.Meta.v
	in.messageFields.Validations = in.Validations.v
	return m.finish(in.messageFields)
}

// ignored is a value read and dropped.
type ignored struct{}

func (*ignored) UnmarshalJSON([]byte) error { return nil }
