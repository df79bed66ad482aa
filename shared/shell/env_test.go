package shell

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestMergeEnv(t *testing.T) {
	host := map[string]string{"TOKEN": "secret", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }
	for _, tc := range []struct {
		name          string
		base, entries []string
		lookup        func(string) (string, bool)
		want          []string
	}{
		{"nothing", nil, nil, lookup, []string{}},
		{"base kept in order", []string{"A=1", "B=2"}, nil, lookup, []string{"A=1", "B=2"}},
		{"verbatim overrides in place", []string{"A=1", "B=2"}, []string{"A=x=y"}, lookup, []string{"A=x=y", "B=2"}},
		{"empty value is a value", []string{"A=1"}, []string{"A="}, lookup, []string{"A="}},
		{"bare key forwarded", []string{"A=1"}, []string{"TOKEN"}, lookup, []string{"A=1", "TOKEN=secret"}},
		{"bare key empty on host", nil, []string{"EMPTY"}, lookup, []string{"EMPTY="}},
		{"bare key unset on host dropped", []string{"A=1"}, []string{"MISSING"}, lookup, []string{"A=1"}},
		{"bare key overrides base", []string{"TOKEN=old"}, []string{"TOKEN"}, lookup, []string{"TOKEN=secret"}},
		{"nil lookup drops bare keys", nil, []string{"TOKEN", "B=2"}, nil, []string{"B=2"}},
		{"last entry wins", nil, []string{"A=1", "B=2", "A=3"}, lookup, []string{"A=3", "B=2"}},
		{"duplicate in base collapses", []string{"A=1", "A=2"}, nil, lookup, []string{"A=2"}},
		{"junk ignored", nil, []string{"", "=v", "="}, lookup, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := slices.Clone(tc.base)
			got := MergeEnv(base, tc.entries, tc.lookup)
			if !slices.Equal(got, tc.want) {
				t.Errorf("MergeEnv = %q, want %q", got, tc.want)
			}
			if !slices.Equal(base, tc.base) {
				t.Errorf("base modified to %q", base)
			}
		})
	}
}

func envOf(t *testing.T, req sandbox.Request, opts Options) []string {
	t.Helper()
	req.Command = "env"
	resp, err := Run(context.Background(), req, opts)
	if err != nil {
		t.Fatalf("Run env: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(resp.Stdout), "\n"), "\n")
}

func TestRunEnvReachesProcess(t *testing.T) {
	t.Setenv("SHELL_TEST_FORWARD", "from host")
	t.Setenv("SHELL_TEST_INHERITED", "inherited")
	t.Setenv("SHELL_TEST_OVERRIDDEN", "host value")
	env := envOf(t, sandbox.Request{Env: []string{
		"SHELL_TEST_FORWARD", "SHELL_TEST_SET=a=b", "SHELL_TEST_NOT_ON_HOST", "SHELL_TEST_OVERRIDDEN=request value",
	}}, Options{})

	for _, want := range []string{
		"SHELL_TEST_FORWARD=from host", "SHELL_TEST_SET=a=b",
		"SHELL_TEST_INHERITED=inherited", "SHELL_TEST_OVERRIDDEN=request value",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("process env lacks %q", want)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "SHELL_TEST_NOT_ON_HOST") || kv == "SHELL_TEST_OVERRIDDEN=host value" {
			t.Errorf("process env has %q", kv)
		}
	}
}

func TestRunCleanEnv(t *testing.T) {
	t.Setenv("SHELL_TEST_FORWARD", "from host")
	t.Setenv("SHELL_TEST_INHERITED", "inherited")
	env := envOf(t, sandbox.Request{Env: []string{"A=1", "SHELL_TEST_FORWARD"}}, Options{CleanEnv: true})
	if want := []string{"A=1", "SHELL_TEST_FORWARD=from host"}; !slices.Equal(env, want) {
		t.Errorf("env = %q, want exactly %q", env, want)
	}
	if env := envOf(t, sandbox.Request{}, Options{CleanEnv: true}); !slices.Equal(env, []string{""}) {
		t.Errorf("env = %q, want nothing", env)
	}
}

func TestEnvValue(t *testing.T) {
	env := []string{"PATH=/bin", "EMPTY=", "A=1=2", "PATH=/usr/bin", "BARE"}
	for _, c := range []struct {
		key, want string
		ok        bool
	}{
		{"PATH", "/usr/bin", true}, // the last entry wins
		{"EMPTY", "", true},
		{"A", "1=2", true},
		{"BARE", "", false}, // not a KEY=value entry
		{"MISSING", "", false},
		{"PAT", "", false},
	} {
		if got, ok := EnvValue(env, c.key); got != c.want || ok != c.ok {
			t.Errorf("EnvValue(%q) = %q, %v; want %q, %v", c.key, got, ok, c.want, c.ok)
		}
	}
}
