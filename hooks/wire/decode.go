package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
)

// decodeStrict decodes one JSON value into v, rejecting unknown keys and
// keeping numbers in interface values as json.Number, so that what decodes
// re-encodes to the same bytes.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// readableError keeps the decoder's error reachable while showing a message
// written for the person who wrote the document.
type readableError struct {
	msg string
	err error
}

func (e *readableError) Error() string { return e.msg }
func (e *readableError) Unwrap() error { return e.err }

// explain rewrites an encoding/json error in the document's own terms:
// "Round: want an integer, got a string" rather than "json: cannot unmarshal
// string into Go struct field ProviderRequest.Round of type int". where, if
// set, says which part of the document was being decoded.
func explain(where string, err error) error {
	if err == nil {
		return nil
	}
	var msg string
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var timeErr *time.ParseError
	switch {
	case errors.As(err, &typeErr):
		msg = fmt.Sprintf("want %s, got %s", describeGoType(typeErr.Type), describeJSONValue(typeErr.Value))
		if path := documentPath(typeErr.Field); path != "" {
			msg = path + ": " + msg
		}
	case errors.As(err, &syntaxErr):
		msg = "invalid JSON: " + syntaxErr.Error()
	case errors.As(err, &timeErr):
		msg = "invalid timestamp: " + timeErr.Error()
	case strings.HasPrefix(err.Error(), "Time.UnmarshalJSON: "):
		msg = "invalid timestamp: want an RFC 3339 string"
	default:
		msg = strings.TrimPrefix(err.Error(), "json: ")
	}
	if where != "" {
		msg = where + ": " + msg
	}
	return &readableError{msg: msg, err: err}
}

// documentPath turns an UnmarshalTypeError field path into the keys the
// author wrote, dropping the names of the structs this package embeds to
// decode ("ProviderRequest.Round" is the request's "Round").
func documentPath(field string) string {
	var keep []string
	for _, seg := range strings.Split(field, ".") {
		switch seg {
		case "", "ProviderRequest", "ProviderResponse", "SessionEvent", "messageFields":
			continue
		}
		keep = append(keep, seg)
	}
	return strings.Join(keep, ".")
}

// describeGoType names the JSON a Go type accepts.
func describeGoType(t reflect.Type) string {
	if t == nil {
		return "a different value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return describeGoType(t.Elem())
	}
	return t.String()
}

// describeJSONValue turns UnmarshalTypeError.Value ("string", "number 1.5")
// into words.
func describeJSONValue(v string) string {
	switch v {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "number":
		return "a number"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	return v
}

// jsonKind names the kind of a valid JSON value from its first byte.
func jsonKind(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// isObject reports whether raw, a valid JSON value, is an object.
func isObject(raw []byte) bool {
	return jsonKind(raw) == "an object"
}

// parseObject checks that data is exactly one JSON object and returns its
// members. Syntax errors say where they are, by line and column.
func parseObject(data []byte) (map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty document, want a JSON object")
	}
	if at := invalidUTF8(data); at >= 0 {
		// PromptKit encodes with encoding/json, which writes U+FFFD for
		// invalid UTF-8: it never sends any, and a hook must not get it.
		return nil, fmt.Errorf("invalid UTF-8 at byte offset %d (PromptKit never sends invalid UTF-8)", at)
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var syntaxErr *json.SyntaxError
		if errors.As(err, &syntaxErr) {
			return nil, &readableError{msg: describeSyntaxError(data, syntaxErr), err: err}
		}
		return nil, explain("", err)
	}
	if !isObject(raw) {
		return nil, fmt.Errorf("want a JSON object, got %s", jsonKind(raw))
	}
	if at := loneSurrogate(data); at >= 0 {
		// encoding/json decodes it as U+FFFD, other decoders fail or keep
		// it: the hook would not read what was written.
		return nil, fmt.Errorf("lone UTF-16 surrogate %s at byte offset %d: decoders replace it with U+FFFD (PromptKit never sends one)", data[at:at+6], at)
	}
	if k, dup := duplicateKey(raw, false); dup {
		return nil, fmt.Errorf("key %q appears twice in one object: PromptKit never sends that, and decoders disagree on which counts", k)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, explain("", err)
	}
	return members, nil
}

// invalidUTF8 is the offset of the first byte of data that is not valid
// UTF-8, or -1.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// describeSyntaxError says where in data the JSON broke, by line and column.
func describeSyntaxError(data []byte, err *json.SyntaxError) string {
	msg := err.Error()
	// At the end of input the scanner feeds itself a space to finish a
	// pending literal or number, and blames that space; the real problem is
	// that the document stops.
	if err.Offset >= int64(len(data)) && strings.HasPrefix(msg, "invalid character ' '") {
		msg = "unexpected end of JSON input"
	}
	line, col := lineColumn(data, err.Offset)
	return fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg)
}

// lineColumn converts a SyntaxError offset (bytes read, the bad byte
// included) into a 1-based line and column, the column counted in
// characters.
func lineColumn(data []byte, offset int64) (line, col int) {
	pos := int(min(max(offset-1, 0), int64(len(data))))
	before := data[:pos]
	line = 1 + bytes.Count(before, []byte("\n"))
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[lineStart:])
}
