package config

import (
	"reflect"
	"testing"
)

func TestExpand(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := testEnv[k]
		return v, ok
	}
	for _, tc := range []struct {
		in, want string
		issues   []expandIssue
	}{
		{in: "plain", want: "plain"},
		{in: "${POD_NAME}", want: "hooks-0"},
		{in: "a-${POD_NAME}-${NAMESPACE}-b", want: "a-hooks-0-agents-b"},
		{in: "${EMPTY}", want: ""},
		{in: "$${POD_NAME}", want: "${POD_NAME}"},
		{in: "x$${y}${NAMESPACE}", want: "x${y}agents"},
		{in: "$$${NAMESPACE}", want: "$${NAMESPACE}"},
		{in: "$HOME and $", want: "$HOME and $"},
		{in: "$$ alone", want: "$$ alone"},
		{in: "{}${NAMESPACE}}", want: "{}agents}"},
		{in: "${NOPE}", want: "", issues: []expandIssue{{issueUnset, "NOPE"}}},
		{in: "${A1}/${_B}", want: "/", issues: []expandIssue{{issueUnset, "A1"}, {issueUnset, "_B"}}},
		{in: "a${POD_NAME", want: "a${POD_NAME", issues: []expandIssue{{issueUnterminated, "${POD_NAME"}}},
		{in: "${}", want: "", issues: []expandIssue{{issueEmptyName, ""}}},
		{in: "${1X}", want: "", issues: []expandIssue{{issueBadName, "1X"}}},
		{in: "${A:-b}", want: "", issues: []expandIssue{{issueBadName, "A:-b"}}},
		{in: "${ NAMESPACE }", want: "", issues: []expandIssue{{issueBadName, " NAMESPACE "}}},
	} {
		got, issues := expand(tc.in, lookup)
		if got != tc.want || !reflect.DeepEqual(issues, tc.issues) {
			t.Errorf("expand(%q) = %q, %v; want %q, %v", tc.in, got, issues, tc.want, tc.issues)
		}
	}
}

func TestExpandOnlySandboxConfig(t *testing.T) {
	yaml := `spec:
  sandboxes:
    box:
      mode: docker_run
      version: "${NOPE}"
      plugin: ${NOPE}
      image: img:${NAMESPACE}
      ${NOPE}: key-is-not-expanded
  hooks:
    h:
      command: /bin/${NOPE}
      args: ["${NOPE}"]
      env: ["X=${NOPE}"]
      hook: eval
`
	f, err := Parse("r.yaml", []byte(yaml), testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	sb := f.Sandboxes[0]
	wantCfg := map[string]any{"image": "img:agents", "${NOPE}": "key-is-not-expanded"}
	if sb.Version != "${NOPE}" || sb.Plugin != "${NOPE}" || !reflect.DeepEqual(sb.Config, wantCfg) {
		t.Errorf("sandbox = %+v; want version and plugin as written, config %v", sb, wantCfg)
	}
	h := f.Hooks[0]
	if h.Command != "/bin/${NOPE}" || h.Args[0] != "${NOPE}" || h.Env[0] != "X=${NOPE}" {
		t.Errorf("hook = %+v; want command, args and env as written", h)
	}
}

func TestExpandUsesProcessEnvByDefault(t *testing.T) {
	t.Setenv("PROMPTKIT_CONFIG_TEST_POD", "from-env")
	f, err := Parse("r.yaml", []byte("spec:\n  sandboxes:\n    s: {mode: direct, pod: \"${PROMPTKIT_CONFIG_TEST_POD}\"}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Sandboxes[0].Config["pod"]; got != "from-env" {
		t.Errorf("pod = %v, want from-env", got)
	}
}
