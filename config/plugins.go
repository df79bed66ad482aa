package config

import (
	"path/filepath"

	"gopkg.in/yaml.v3"
)

var pluginKeys = []string{"dirs"}

// pluginDirs reads spec.plugins: the directories that replace the plugin
// host's default search path, made absolute against the config's
// directory so the file means the same wherever it is loaded from.
func (p *parser) pluginDirs(v *yaml.Node) []string {
	m := p.deref(v, pluginsKey)
	if isNull(m) {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		p.addAt(v, pluginsKey, "must be a mapping, got %s", describe(m))
		return nil
	}
	var out []string
	for _, kv := range p.entries(m, pluginsKey) {
		if kv.name != "dirs" {
			p.addAt(kv.key, pluginsKey, "%s", unknownKey(kv.name, pluginKeys))
			continue
		}
		dirs, nodes, _ := p.strList(kv.value, pluginsKey, "dirs")
		for i, d := range dirs {
			if d == "" {
				p.addAt(nodes[i], pluginsKey, "dirs[%d] is empty", i)
				continue
			}
			if !filepath.IsAbs(d) {
				d = filepath.Join(p.dir, d)
			}
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}
