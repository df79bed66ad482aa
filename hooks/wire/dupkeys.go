package wire

import (
	"bytes"
	"encoding/json"
	"strings"
)

// duplicateKey returns the first key that appears twice in one object of
// data, a valid JSON document, at any depth. Decoders disagree on such a
// document (encoding/json keeps the last value, others the first), so one
// that means one thing to us and another to PromptKit must not pass. With
// foldTop, keys of the outermost object count as the same when they
// differ only in case, as encoding/json matches them to struct fields
// ({"allow":false,"Allow":true} allows, decoded into a struct).
func duplicateKey(data []byte, foldTop bool) (key string, found bool) {
	type frame struct {
		object    bool
		expectKey bool
		keys      map[string]struct{}
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // no float conversion: only the structure matters
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // end of input; data is valid JSON
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if k, isKey := tok.(string); isKey && top != nil && top.object && top.expectKey {
			seen := k
			if foldTop && len(stack) == 1 {
				seen = strings.ToLower(k)
			}
			if _, dup := top.keys[seen]; dup {
				return k, true
			}
			top.keys[seen] = struct{}{}
			top.expectKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, expectKey: true, keys: map[string]struct{}{}})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			} else {
				top = nil
			}
		}
		// A value has ended: an object's next token is a key.
		if top != nil && top.object {
			top.expectKey = true
		}
	}
}
