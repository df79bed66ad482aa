package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestAnchorsAndMergeKeys(t *testing.T) {
	yaml := `x-docker: &docker
  mode: docker_run
  network: none
  mounts: &mounts [a, b]
x-hook: &hook
  hook: provider
  phases: [before_call]
spec:
  sandboxes:
    one:
      <<: *docker
      image: one
    two:
      <<: *docker
      network: bridge
      image: two
      mounts: *mounts
  hooks:
    h1:
      <<: *hook
      command: a
    h2:
      <<: [{timeout_ms: 100}, *hook, {timeout_ms: 200, mode: observe}]
      command: b
`
	f, err := Parse("r.yaml", []byte(yaml), testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	one, two := f.Sandboxes[0], f.Sandboxes[1]
	if one.Mode != "docker_run" || !reflect.DeepEqual(one.Config, map[string]any{"network": "none", "mounts": []any{"a", "b"}, "image": "one"}) {
		t.Errorf("one = %+v", one)
	}
	if two.Mode != "docker_run" || !reflect.DeepEqual(two.Config, map[string]any{"network": "bridge", "mounts": []any{"a", "b"}, "image": "two"}) {
		t.Errorf("two = %+v (explicit keys must win over merged ones)", two)
	}
	h1, h2 := f.Hooks[0], f.Hooks[1]
	if h1.Type != "provider" || h1.Command != "a" || h2.Type != "provider" || h2.Command != "b" {
		t.Errorf("hooks = %+v, %+v", h1, h2)
	}
	if h2.Timeout.Milliseconds() != 100 || h2.Mode != ModeObserve {
		t.Errorf("h2: timeout %s, mode %s; the earliest merge source must win", h2.Timeout, h2.Mode)
	}
}

func TestBadAnchors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{
			"merge of itself",
			"spec:\n  hooks: &h\n    <<: *h\n",
			"r.yaml:3:9: spec.hooks: merge key \"<<\" refers to a mapping that contains it",
		},
		{
			"merge list with a scalar",
			"spec:\n  hooks:\n    <<: [a]\n",
			"r.yaml:3:10: spec.hooks: merge key \"<<\" takes mappings, got a string",
		},
		{
			"unknown anchor",
			"spec:\n  hooks: *nope\n",
			"r.yaml: unknown anchor 'nope' referenced",
		},
		{
			"nested self-reference",
			"spec:\n  sandboxes:\n    s:\n      mode: direct\n      m: &m {a: [{b: *m}]}\n",
			"r.yaml:5:22: spec.sandboxes.s: alias *m in key \"m.a[0].b\" refers to a value that contains it",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("r.yaml", []byte(tc.yaml), Options{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("got:  %v\nwant: %s", err, tc.want)
			}
		})
	}
}

// A few lines of nested aliases must not expand into billions of nodes.
func TestAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("x0: &x0 [a, a, a, a, a, a, a, a, a, a]\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("x")
		b.WriteByte(byte('0' + i))
		b.WriteString(": &x")
		b.WriteByte(byte('0' + i))
		b.WriteString(" [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*x")
			b.WriteByte(byte('0' + i - 1))
		}
		b.WriteString("]\n")
	}
	b.WriteString("spec:\n  sandboxes:\n    s:\n      mode: direct\n      bomb: *x9\n")
	_, err := Parse("r.yaml", []byte(b.String()), Options{})
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("want *Error, got %v", err)
	}
	want := "spec.sandboxes.s: document is too large once aliases are expanded (more than 100000 nodes)"
	if len(ce.Problems) != 1 || !strings.HasSuffix(ce.Problems[0].Error(), want) {
		t.Errorf("got:\n%v\nwant one problem ending in %q", err, want)
	}
}

func TestDuplicateCheckSkipsMergedKeys(t *testing.T) {
	yaml := "base: &b {mode: direct}\nspec:\n  sandboxes:\n    s:\n      <<: *b\n      <<: {x: 1}\n      mode: direct\n"
	f, err := Parse("r.yaml", []byte(yaml), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Sandboxes[0].Config; !reflect.DeepEqual(got, map[string]any{"x": 1}) {
		t.Errorf("config = %v", got)
	}
}

func TestConfigScalarTypes(t *testing.T) {
	yaml := `spec:
  sandboxes:
    s:
      mode: direct
      int: 42
      hex: 0x10
      neg: -3
      float: 2.5
      bool: false
      null: ~
      date: 2024-01-02
      quoted_int: "42"
`
	f, err := Parse("r.yaml", []byte(yaml), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"int": 42, "hex": 16, "neg": -3, "float": 2.5, "bool": false, "null": nil,
		"date": "2024-01-02", "quoted_int": "42",
	}
	if got := f.Sandboxes[0].Config; !reflect.DeepEqual(got, want) {
		t.Errorf("config:\ngot:  %#v\nwant: %#v", got, want)
	}
}
