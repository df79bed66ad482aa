package config

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

const (
	nullTag  = "!!null"
	boolTag  = "!!bool"
	intTag   = "!!int"
	floatTag = "!!float"
	mergeTag = "!!merge"
)

// pair is one key of a mapping with its value. name is the key's text.
type pair struct {
	key, value *yaml.Node
	name       string
}

func find(ps []pair, name string) (pair, bool) {
	for _, e := range ps {
		if e.name == name {
			return e, true
		}
	}
	return pair{}, false
}

// spend charges one node against the expansion budget and reports whether
// there was any left. The first overrun is reported at n.
func (p *parser) spend(n *yaml.Node, entry string) bool {
	p.budget--
	if p.budget >= 0 {
		return true
	}
	if !p.exhausted {
		p.exhausted = true
		p.addAt(n, entry, "document is too large once aliases are expanded (more than %d nodes)", nodeBudget)
	}
	return false
}

// deref returns the node an alias stands for (n itself otherwise), never
// nil, so callers can inspect Kind without further checks.
func (p *parser) deref(n *yaml.Node, entry string) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 0 && !p.spend(n, entry) {
			return &yaml.Node{}
		}
		n = n.Alias
	}
	if n == nil {
		return &yaml.Node{}
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.ShortTag() == mergeTag
}

// describe names what a node is, for "must be X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case nullTag:
			return "null"
		case boolTag:
			return "a boolean"
		case intTag:
			return "an integer"
		case floatTag:
			return "a number"
		}
		return "a string"
	case yaml.AliasNode:
		if n.Alias != nil {
			return describe(n.Alias)
		}
	}
	return "null"
}

// entries returns the keys of mapping m in the order written, with merge
// keys ("<<: *anchor") expanded in place the way YAML defines them: keys
// written in m win over merged ones, and earlier merges over later ones.
// A duplicate key keeps its first value; checkNodes reports it.
func (p *parser) entries(m *yaml.Node, entry string) []pair {
	return p.merged(m, entry, map[*yaml.Node]bool{})
}

func (p *parser) merged(m *yaml.Node, entry string, active map[*yaml.Node]bool) []pair {
	active[m] = true
	defer delete(active, m)

	explicit := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := p.deref(m.Content[i], entry); k.Kind == yaml.ScalarNode && !isMerge(m.Content[i]) {
			explicit[k.Value] = true
		}
	}
	var out []pair
	seen := map[string]bool{}
	add := func(e pair) {
		if !seen[e.name] {
			seen[e.name] = true
			out = append(out, e)
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !p.spend(m.Content[i], entry) {
			return out
		}
		k, v := m.Content[i], m.Content[i+1]
		if isMerge(k) {
			for _, e := range p.mergeSources(v, entry, active) {
				if !explicit[e.name] {
					add(e)
				}
			}
			continue
		}
		kd := p.deref(k, entry)
		if kd.Kind != yaml.ScalarNode {
			p.addAt(k, entry, "keys must be strings, got %s", describe(kd))
			continue
		}
		add(pair{key: k, value: v, name: kd.Value})
	}
	return out
}

// mergeSources expands the value of a "<<" key: a mapping or a list of
// mappings.
func (p *parser) mergeSources(v *yaml.Node, entry string, active map[*yaml.Node]bool) []pair {
	source := func(at, m *yaml.Node) []pair {
		if active[m] {
			p.addAt(at, entry, "merge key \"<<\" refers to a mapping that contains it")
			return nil
		}
		return p.merged(m, entry, active)
	}
	d := p.deref(v, entry)
	switch d.Kind {
	case yaml.MappingNode:
		return source(v, d)
	case yaml.SequenceNode:
		var out []pair
		for _, item := range d.Content {
			m := p.deref(item, entry)
			if m.Kind != yaml.MappingNode {
				p.addAt(item, entry, "merge key \"<<\" takes mappings, got %s", describe(m))
				continue
			}
			out = append(out, source(item, m)...)
		}
		return out
	}
	p.addAt(v, entry, "merge key \"<<\" takes a mapping or a list of mappings, got %s", describe(d))
	return nil
}

// checkNodes reports, anywhere in the document, keys written twice in
// one mapping and explicit tags. yaml.v3 only notices duplicates when
// decoding into Go values, and PromptKit, which does that, would reject
// the file. Aliases are not followed: what they point to is checked where
// it is written.
func (p *parser) checkNodes(n *yaml.Node, path string) {
	if n.Style&yaml.TaggedStyle != 0 {
		// PromptKit decodes a tagged value (!!binary base64-decodes it)
		// where this loader reads its text: the two would disagree.
		p.addAt(n, path, "YAML tag %s is not supported: write the value without it", n.Tag)
	}
	switch n.Kind {
	case yaml.MappingNode:
		first := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			name := ""
			if kd := p.deref(k, path); kd.Kind == yaml.ScalarNode && !isMerge(k) {
				name = kd.Value
				if f, dup := first[name]; dup {
					p.addAt(k, path, "duplicate key %q (first defined at line %d)", name, f.Line)
				} else {
					first[name] = k
				}
			}
			p.checkNodes(k, path)
			p.checkNodes(v, joinPath(path, name))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p.checkNodes(c, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// str reads v as a string; null reads as "". Any scalar is text here, as
// when yaml.v3 decodes into a string field. ok is false, with a problem
// recorded, when v is a list or mapping.
func (p *parser) str(v *yaml.Node, entry, key string) (s string, ok bool) {
	d := p.deref(v, entry)
	switch {
	case isNull(d):
		return "", true
	case d.Kind == yaml.ScalarNode:
		return d.Value, true
	}
	p.addAt(v, entry, "key %q must be a string, got %s", key, describe(d))
	return "", false
}

// strList reads v as a list of strings; null and [] read as nil. Each
// item comes back with its node so later checks can point at it.
func (p *parser) strList(v *yaml.Node, entry, key string) ([]string, []*yaml.Node, bool) {
	d := p.deref(v, entry)
	if isNull(d) {
		return nil, nil, true
	}
	if d.Kind != yaml.SequenceNode {
		p.addAt(v, entry, "key %q must be a list of strings, got %s", key, describe(d))
		return nil, nil, false
	}
	var out []string
	var nodes []*yaml.Node
	ok := true
	for i, item := range d.Content {
		if !p.spend(item, entry) {
			return nil, nil, false
		}
		id := p.deref(item, entry)
		if id.Kind != yaml.ScalarNode || isNull(id) {
			p.addAt(item, entry, "%s[%d] must be a string, got %s", key, i, describe(id))
			ok = false
			continue
		}
		out = append(out, id.Value)
		nodes = append(nodes, item)
	}
	return out, nodes, ok
}
