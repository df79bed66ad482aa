package kubebox

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"no target", map[string]any{"namespace": "ns"}, `config: key "pod" is required unless "selector" is given`},
		{"both", map[string]any{"pod": "p", "selector": "app=hooks"}, `config: keys "pod" and "selector" exclude each other`},
		{"bad pod", map[string]any{"pod": "Agent_1"}, `config: key "pod": invalid name "Agent_1"`},
		{"bad selector", map[string]any{"selector": "app in hooks"}, `config: key "selector": invalid label selector "app in hooks"`},
		{"empty selector", map[string]any{"selector": " "}, `config: key "selector": " " selects every pod`},
		{"bad namespace", map[string]any{"pod": "p", "namespace": "a.b"}, `config: key "namespace": invalid name "a.b"`},
		{"bad container", map[string]any{"pod": "p", "container": "Hooks"}, `config: key "container": invalid name "Hooks"`},
		{"unknown key", map[string]any{"pod": "p", "podd": "x"}, `config: unknown key "podd"`},
		{"bad env", map[string]any{"pod": "p", "env": []any{"=v"}}, `config: key "env": entry "=v" has no variable name`},
		{"extra_args native", map[string]any{"pod": "p", "extra_args": []any{"-v=9"}}, `extra_args needs transport: cli`},
		{"env not a shell name", map[string]any{"pod": "p", "env": []any{"A-B=v"}}, `config: key "env": variable "A-B": the name must be a shell identifier`},
		{"bad warm", map[string]any{"pod": "p", "warm": 65}, `config: key "warm": must be between 0 (none) and 64 exec sessions, got 65`},
		{"bad transport", map[string]any{"pod": "p", "transport": "spdy"}, `unknown transport "spdy"`},
		{"zero timeout", map[string]any{"pod": "p", "timeout": "0s"}, `config: key "timeout": must be greater than zero`},
		{"bad output limit", map[string]any{"pod": "p", "output_limit": 0}, `config: key "output_limit": must be a positive number of bytes, got 0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseConfig(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	// Every problem at once.
	_, err := parseConfig(map[string]any{"pod": "Bad_Pod", "namespace": "Bad_NS", "timeout": "0s"})
	if n := strings.Count(err.Error(), "config: key"); n != 3 {
		t.Errorf("want 3 problems reported, got %d: %v", n, err)
	}
}

func TestConfigDefaultsAndValues(t *testing.T) {
	s, err := parseConfig(map[string]any{"pod": "agent-7d9f-x2"})
	if err != nil {
		t.Fatal(err)
	}
	if s.pod != "agent-7d9f-x2" || s.selector != nil || s.transport != TransportNative || s.kubectlPath != "kubectl" ||
		s.timeout != sandbox.DefaultTimeout || s.outputLimit != sandbox.DefaultOutputLimit || s.namespace != "" || s.warm != DefaultWarm {
		t.Errorf("defaults: %+v", s)
	}
	t.Setenv("PKS_KUBE_FWD", "v")
	s, err = parseConfig(map[string]any{
		"selector": "app.kubernetes.io/name=promptkit-agent,tier in (hooks)", "namespace": "promptkit", "container": "hooks",
		"kubeconfig": "/etc/kube/config", "context": "prod", "env": []any{"A=1", "PKS_KUBE_FWD", "PKS_KUBE_UNSET"},
		"transport": "cli", "kubectl_path": "/usr/bin/kubectl", "extra_args": []any{"--request-timeout=5s"},
		"timeout": 2500, "output_limit": 100, "warm": 0,
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.selector == nil || s.selector.String() != "app.kubernetes.io/name=promptkit-agent,tier in (hooks)" ||
		s.namespace != "promptkit" || s.container != "hooks" || s.kubeconfig != "/etc/kube/config" || s.context != "prod" ||
		strings.Join(s.env, ",") != "A=1,PKS_KUBE_FWD=v" || s.transport != TransportCLI || s.kubectlPath != "/usr/bin/kubectl" ||
		strings.Join(s.extraArgs, " ") != "--request-timeout=5s" || s.timeout != 2500*time.Millisecond || s.outputLimit != 100 || s.warm != 0 {
		t.Errorf("values: %+v", s)
	}
	// What the sandbox sets in every process, it reports, for the host
	// to redact.
	if got := (&Sandbox{set: s}).ForwardedEnv(); !slices.Equal(got, []string{"A=1", "PKS_KUBE_FWD=v"}) {
		t.Errorf("ForwardedEnv = %q", got)
	}
}
