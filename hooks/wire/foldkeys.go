package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// encoding/json matches an object's keys to a struct's fields regardless
// of case, and the last of two keys that match one field wins:
// {"Model":"a","model":"b"} is a request for model b to Go, and may be
// one for model a to a hook's decoder. foldedDuplicate finds such a pair
// where the document is decoded into a struct; the keys of a map (a
// request's Metadata, a message's meta) are the map's own and only match
// exactly, which the scanner's duplicate check already covers.

// foldedDup is two keys of one struct-decoded object that name the same
// field to encoding/json.
type foldedDup struct {
	path          string // the object's place in the document, "" for the top
	first, second string
}

func (d *foldedDup) Error() string {
	where := ""
	if d.path != "" {
		where = d.path + ": "
	}
	return fmt.Sprintf("%skeys %q and %q are one key to PromptKit's decoder, which matches keys regardless of case and keeps the last: write it once",
		where, d.first, d.second)
}

// foldedDuplicate walks data, valid JSON to be decoded into a value of
// type t, and returns the first pair of keys of one struct-decoded object
// that differ at most in case, or nil. It reads data in one pass, in
// place, and allocates only for objects of many keys.
func foldedDuplicate(data []byte, t reflect.Type) *foldedDup {
	w := foldWalker{s: scanner{data: data}}
	w.s.space()
	w.value(t)
	return w.dup
}

// foldWalker is one walk. The folded keys of the objects being walked
// are in arena, innermost last, each object's first in keys on the Go
// stack; path is where the walk is, for the message.
type foldWalker struct {
	s     scanner
	arena []byte
	keys  []foldedKey
	path  []pathStep
	dup   *foldedDup
}

// foldedKey is a key as folded (arena[fs:fe]) and as written (the quoted
// string data[ks:ke]).
type foldedKey struct{ fs, fe, ks, ke int }

// pathStep is a field's name, a map's key (data[ks:ke], quoted) or an
// array's index.
type pathStep struct {
	name   string
	ks, ke int
	index  int
}

var (
	messageFieldsTy = reflect.TypeFor[messageFields]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// value walks the value at w.s.i as type t (nil: a value of no known
// type, whose objects are maps) and leaves w.s.i after it.
func (w *foldWalker) value(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == messageType {
		// Message decodes itself, as its fields (and media_summary).
		t = messageFieldsTy
	}
	if t != nil && (t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType)) {
		t = nil
	}
	if w.s.i >= len(w.s.data) {
		return false
	}
	switch w.s.data[w.s.i] {
	case '{':
		if t != nil && t.Kind() == reflect.Struct {
			return w.object(fieldsOf(t), nil)
		}
		if t != nil && t.Kind() == reflect.Map {
			return w.object(nil, t.Elem())
		}
	case '[':
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			return w.array(t.Elem())
		}
	}
	// Nothing typed below: maps of any and scalars hold no struct.
	return w.s.value()
}

// object walks an object: a struct's when fields is set (keys compared
// folded, each value walked as its field's type), a map's otherwise
// (each value walked as elem).
func (w *foldWalker) object(fields map[string]structField, elem reflect.Type) bool {
	s := &w.s
	s.i++ // {
	base, arenaBase := len(w.keys), len(w.arena)
	defer func() { w.keys, w.arena = w.keys[:base], w.arena[:arenaBase] }()
	var seen map[string]int // past smallObject keys: folded key -> its index in keys
	for {
		s.space()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
			s.space()
		}
		ks := s.i
		escaped, ok := s.str()
		if !ok {
			return false
		}
		ke := s.i
		s.space()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		step := pathStep{ks: ks, ke: ke}
		vt := elem
		if fields != nil {
			key := s.data[ks+1 : ke-1]
			if escaped {
				key = unescapeKey(s.data[ks:ke])
			}
			fs := len(w.arena)
			w.arena = appendFolded(w.arena, key)
			folded := w.arena[fs:]
			if first, dup := w.seen(base, seen, folded); dup {
				w.dup = &foldedDup{path: w.where(), first: w.written(w.keys[first]), second: w.written(foldedKey{ks: ks, ke: ke})}
				return false
			}
			w.keys = append(w.keys, foldedKey{fs, len(w.arena), ks, ke})
			if n := len(w.keys) - base; n > smallObject {
				if seen == nil {
					seen = make(map[string]int, 2*n)
					for i := base; i < len(w.keys); i++ {
						seen[string(w.arena[w.keys[i].fs:w.keys[i].fe])] = i
					}
				} else {
					seen[string(folded)] = len(w.keys) - 1
				}
			}
			f, known := fields[string(folded)]
			if !known {
				// A key the struct does not have: the strict decoder
				// refuses it; its value is not looked into.
				if !s.value() {
					return false
				}
				continue
			}
			vt, step.name = f.typ, f.name
		}
		w.path = append(w.path, step)
		ok = w.value(vt)
		w.path = w.path[:len(w.path)-1]
		if !ok {
			return false
		}
	}
}

// seen looks folded up among the keys of the object whose keys start at
// base; the index in keys of the key it repeats, if it does.
func (w *foldWalker) seen(base int, index map[string]int, folded []byte) (int, bool) {
	if index != nil {
		i, dup := index[string(folded)]
		return i, dup
	}
	for i := base; i < len(w.keys); i++ {
		if string(w.arena[w.keys[i].fs:w.keys[i].fe]) == string(folded) {
			return i, true
		}
	}
	return 0, false
}

func (w *foldWalker) array(elem reflect.Type) bool {
	s := &w.s
	s.i++ // [
	for n := 0; ; n++ {
		s.space()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ']':
			s.i++
			return true
		case ',':
			s.i++
			s.space()
		}
		w.path = append(w.path, pathStep{index: n})
		ok := w.value(elem)
		w.path = w.path[:len(w.path)-1]
		if !ok {
			return false
		}
	}
}

// written is a key as the document has it, unescaped.
func (w *foldWalker) written(k foldedKey) string {
	return string(unescapeKey(w.s.data[k.ks:k.ke]))
}

// where is the walk's place in the document: Messages[0].tool_calls[1].
func (w *foldWalker) where() string {
	var b strings.Builder
	for _, st := range w.path {
		switch {
		case st.name != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.name)
		case st.ke > 0:
			fmt.Fprintf(&b, "[%s]", w.s.data[st.ks:st.ke])
		default:
			fmt.Fprintf(&b, "[%d]", st.index)
		}
	}
	return b.String()
}
