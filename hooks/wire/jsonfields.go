package wire

import (
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// structField is a field encoding/json decodes a key into.
type structField struct {
	name string // as the document names it
	typ  reflect.Type
}

var fieldCache sync.Map // reflect.Type -> map[string]structField

// fieldsOf maps the folded JSON names of t's fields, embedded structs'
// included, to the fields, as encoding/json sees them: a tag's name, else
// the field's; "-" and unexported fields are not there. A field of the
// outer struct hides an embedded one of the same name.
func fieldsOf(t reflect.Type) map[string]structField {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]structField)
	}
	m := map[string]structField{}
	addFields(m, t, 0)
	fieldCache.Store(t, m)
	return m
}

func addFields(m map[string]structField, t reflect.Type, depth int) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, taken := m[foldKey(name)]; !taken {
			m[foldKey(name)] = structField{name: name, typ: ft}
		}
	}
	// Embedded fields after the outer ones: the outer ones hide them.
	for _, e := range embedded {
		if depth < 8 {
			addFields(m, e, depth+1)
		}
	}
}

// foldKey is appendFolded for a string.
func foldKey(k string) string { return string(appendFolded(nil, []byte(k))) }

// appendFolded appends key folded as encoding/json folds keys and field
// names to match them: two keys fold alike exactly when it takes them
// for the same name.
func appendFolded(dst, key []byte) []byte {
	for i := 0; i < len(key); {
		c := key[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(key[i:])
		dst = utf8.AppendRune(dst, unicode.ToUpper(unicode.ToLower(r)))
		i += n
	}
	return dst
}
