package wire

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// The stdin encoder writes what json.Marshal would, byte for byte, into
// one buffer of exactly the right size: it encodes the payload twice, the
// first time only counting. json.Marshal itself grows its buffer by
// doubling, copies the result out of it, and copies a MarshalJSON result
// (every Message) once more into the buffer of the value around it; on a
// large payload that is several times its size in garbage.
//
// The encoder walks the structs, slices and strings of the payload types
// itself and hands everything else — numbers, maps, interface values,
// times, raw JSON — to json.Marshal, so that the bytes are
// encoding/json's own. Long strings are encoded in pieces, each by
// encoding/json, straight into the buffer. TestEncoderMatchesMarshal
// checks the result against json.Marshal.

// jsonSink receives encoded JSON. With count set it only measures it.
type jsonSink struct {
	buf   []byte
	n     int
	count bool
}

func (s *jsonSink) Write(b []byte) (int, error) {
	if s.count {
		s.n += len(b)
	} else {
		s.buf = append(s.buf, b...)
	}
	return len(b), nil
}

func (s *jsonSink) WriteString(str string) {
	if s.count {
		s.n += len(str)
	} else {
		s.buf = append(s.buf, str...)
	}
}

// marshalExact runs encode once to measure and once into a buffer of the
// measured size.
func marshalExact(encode func(*jsonSink) error) ([]byte, error) {
	counter := &jsonSink{count: true}
	if err := encode(counter); err != nil {
		return nil, err
	}
	out := &jsonSink{buf: make([]byte, 0, counter.n)}
	if err := encode(out); err != nil {
		return nil, err
	}
	return out.buf, nil
}

var (
	messageType   = reflect.TypeFor[Message]()
	stringType    = reflect.TypeFor[string]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

// encodeValue writes v as json.Marshal would write it in place.
func encodeValue(s *jsonSink, v reflect.Value) error {
	t := v.Type()
	switch {
	case t == messageType:
		if err := encodeMessage(s, v.Interface().(Message)); err != nil {
			return &json.MarshalerError{Type: messageType, Err: err}
		}
		return nil
	case t == stringType:
		return encodeString(s, v.String())
	case t.Kind() == reflect.Pointer && walkable(t.Elem()):
		if v.IsNil() {
			s.WriteString("null")
			return nil
		}
		return encodeValue(s, v.Elem())
	case t.Kind() == reflect.Slice && walkable(t) && walkable(t.Elem()):
		if v.IsNil() {
			s.WriteString("null")
			return nil
		}
		s.WriteString("[")
		for i := range v.Len() {
			if i > 0 {
				s.WriteString(",")
			}
			if err := encodeValue(s, v.Index(i)); err != nil {
				return err
			}
		}
		s.WriteString("]")
		return nil
	case t.Kind() == reflect.Struct && walkable(t):
		if plan := planFor(t); plan != nil {
			s.WriteString("{")
			first := true
			if err := plan.encode(s, v, "", &first); err != nil {
				return err
			}
			s.WriteString("}")
			return nil
		}
	}
	// In place, the value is addressable: its pointer methods count. A
	// pointer to it encodes the same, and errors name the value's type;
	// only a value that encodes itself must be passed as it is, or errors
	// would name the pointer type.
	x := v.Interface()
	if v.CanAddr() && !t.Implements(marshalerType) && !t.Implements(textType) {
		x = v.Addr().Interface()
	}
	b, err := json.Marshal(x)
	if err != nil {
		return err
	}
	_, _ = s.Write(b)
	return nil
}

// walkable reports whether the encoder may take a value of type t apart
// rather than hand it to json.Marshal: a string, or a struct, pointer or
// slice that neither it nor its pointer encodes itself.
func walkable(t reflect.Type) bool {
	if t == messageType || t == stringType {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Slice:
	default:
		return false
	}
	p := reflect.PointerTo(t)
	if t.Implements(marshalerType) || p.Implements(marshalerType) ||
		t.Implements(textType) || p.Implements(textType) {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer:
		return walkable(t.Elem())
	case reflect.Slice:
		return t.Elem().Kind() != reflect.Uint8 // []byte is base64
	}
	return true
}

// structPlan is how json.Marshal writes a struct: its fields, in order.
// Only plain structs have one: no embedded fields, no tag options but
// omitempty, no two fields of one name.
type structPlan struct {
	fields []planField
}

type planField struct {
	index     int
	name      string
	key       string // "name": encoded
	omitEmpty bool
}

var plans sync.Map // reflect.Type → *structPlan (nil: use json.Marshal)

func planFor(t reflect.Type) *structPlan {
	if p, ok := plans.Load(t); ok {
		return p.(*structPlan)
	}
	p := makePlan(t)
	plans.Store(t, p)
	return p
}

func makePlan(t reflect.Type) *structPlan {
	plan := &structPlan{}
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" {
			return nil
		}
		if name == "" {
			name = f.Name
		} else if !plainKey(name) {
			return nil
		}
		if names[name] {
			return nil
		}
		names[name] = true
		key, err := json.Marshal(name)
		if err != nil {
			return nil
		}
		plan.fields = append(plan.fields, planField{
			index: i, name: name, key: string(key) + ":", omitEmpty: opts == "omitempty",
		})
	}
	return plan
}

// plainKey reports whether name is a tag name encoding/json takes as it
// is and writes without escapes: letters, digits and underscores.
func plainKey(name string) bool {
	for _, c := range name {
		if c != '_' && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// encode writes the fields of v, a struct of the plan's type, skipping
// the one named skip; first says whether no member has been written yet.
func (p *structPlan) encode(s *jsonSink, v reflect.Value, skip string, first *bool) error {
	for _, f := range p.fields {
		if f.name == skip {
			continue
		}
		fv := v.Field(f.index)
		if f.omitEmpty && isEmptyValue(fv) {
			continue
		}
		if !*first {
			s.WriteString(",")
		}
		*first = false
		s.WriteString(f.key)
		if err := encodeValue(s, fv); err != nil {
			return err
		}
	}
	return nil
}

// isEmptyValue is what omitempty leaves out.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// encodeMessage writes m as Message.MarshalJSON does: its tagged fields
// but content, then media_summary and content.
func encodeMessage(s *jsonSink, m Message) error {
	plan := planFor(reflect.TypeFor[messageFields]())
	if plan == nil {
		panic("wire: messageFields has no encoding plan")
	}
	fields := messageFields(m)
	s.WriteString("{")
	first := true
	if err := plan.encode(s, reflect.ValueOf(&fields).Elem(), "content", &first); err != nil {
		return err
	}
	if sum := m.MediaSummary(); sum != nil {
		s.WriteString(`,"media_summary":`)
		if err := encodeValue(s, reflect.ValueOf(sum)); err != nil {
			return err
		}
	}
	if content := m.EncodedContent(); content != "" {
		s.WriteString(`,"content":`)
		if err := encodeString(s, content); err != nil {
			return err
		}
	}
	s.WriteString("}")
	return nil
}

// shortString is the length up to which a string is encoded by one call
// of json.Marshal; a longer one is encoded in pieces of about this size.
const shortString = 32 << 10

// encodeString writes str as encoding/json does, quotes, escapes and all.
// It escapes one character at a time, whatever comes before or after, so
// str can be encoded in pieces cut between characters.
func encodeString(s *jsonSink, str string) error {
	if len(str) <= shortString {
		b, err := json.Marshal(str)
		if err != nil {
			return err
		}
		_, _ = s.Write(b)
		return nil
	}
	enc := json.NewEncoder(stripQuotes{s})
	s.WriteString(`"`)
	for len(str) > 0 {
		n := pieceEnd(str, shortString)
		if err := enc.Encode(str[:n]); err != nil {
			return err
		}
		str = str[n:]
	}
	s.WriteString(`"`)
	return nil
}

// pieceEnd returns where to cut a piece of about size bytes off the front
// of str: at the end of a character, as encoding/json reads them (an
// invalid byte is a character of its own).
func pieceEnd(str string, size int) int {
	if len(str) <= size {
		return len(str)
	}
	// Every byte that is not a UTF-8 continuation byte starts a character.
	// If none of the last few does, the byte at size is a stray
	// continuation byte, a character of its own: no valid character has
	// more than three.
	for i := size; i > size-utf8.UTFMax; i-- {
		if utf8.RuneStart(str[i]) {
			return i
		}
	}
	return size
}

// stripQuotes passes on one string encoded by json.Encoder without its
// quotes and newline.
type stripQuotes struct{ s *jsonSink }

func (w stripQuotes) Write(b []byte) (int, error) {
	inner := bytes.TrimSuffix(b, []byte("\n"))
	if len(inner) >= 2 {
		inner = inner[1 : len(inner)-1]
	}
	return w.s.Write(inner)
}
