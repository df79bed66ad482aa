package main

import (
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/seal"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/server"
)

func TestOptionsFromEnvAndFlags(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	env := map[string]string{
		"SANDBOXD_WORKSPACE":      "app=" + a + ":lib=" + b,
		"SANDBOXD_ADDR":           "127.0.0.1:9999",
		"SANDBOXD_READONLY":       "true",
		"SANDBOXD_SECRET_ENV":     "A_KEY, B_KEY",
		"SANDBOXD_ALLOWED_ORIGIN": "http://localhost:3000",
		"SANDBOXD_MAX_BODY":       "1234",
	}
	getenv := func(k string) string { return env[k] }
	o, err := parseOptions(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.addr != "127.0.0.1:9999" || !o.readonly || o.maxBody != 1234 ||
		!slices.Equal(o.secretEnv, []string{"A_KEY", "B_KEY"}) || !slices.Equal(o.allowedOrigins, []string{"http://localhost:3000"}) {
		t.Errorf("from env: %+v", o)
	}
	ws, err := o.serverWorkspaces()
	if err != nil || len(ws) != 2 || ws[0].Name != "app" || ws[0].Dir != a || ws[1].Name != "lib" || ws[1].Dir != b {
		t.Errorf("workspaces %+v, %v", ws, err)
	}
	o, err = parseOptions([]string{"--addr", "127.0.0.1:1", "--workspace", a, "--secret-env", "C_KEY"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.addr != "127.0.0.1:1" || !slices.Equal(o.workspaces, []string{a}) || !slices.Equal(o.secretEnv, []string{"C_KEY"}) {
		t.Errorf("flags over env: %+v", o)
	}
}

// TestDiagnosticsTimeoutOption: the flag's 0 turns the checks off,
// which the server's Config says with a negative limit (its zero is the
// default).
func TestDiagnosticsTimeoutOption(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		env  string
		want time.Duration
	}{
		{nil, "", server.DefaultDiagnosticsTimeout},
		{[]string{"--diagnostics-timeout", "2s"}, "", 2 * time.Second},
		{nil, "750ms", 750 * time.Millisecond},
		{[]string{"--diagnostics-timeout", "0"}, "3s", -1},
	} {
		getenv := func(k string) string {
			if k == "SANDBOXD_DIAGNOSTICS_TIMEOUT" {
				return c.env
			}
			return ""
		}
		o, err := parseOptions(append([]string{"--workspace", dir}, c.args...), getenv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := o.config(getenv)
		if err != nil || cfg.DiagnosticsTimeout != c.want {
			t.Errorf("%v with env %q: %v, %v; want %v", c.args, c.env, cfg.DiagnosticsTimeout, err, c.want)
		}
	}
}

// TestCallBudgetOption: the budget defaults under PromptKit's 30 s, the
// variable and the flag set it, and 0 turns it off.
func TestCallBudgetOption(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		env  string
		want time.Duration
	}{
		{nil, "", 25 * time.Second},
		{[]string{"--call-budget", "10s"}, "", 10 * time.Second},
		{nil, "5s", 5 * time.Second},
		{[]string{"--call-budget", "0"}, "5s", 0},
	} {
		getenv := func(k string) string {
			if k == "SANDBOXD_CALL_BUDGET" {
				return c.env
			}
			return ""
		}
		o, err := parseOptions(append([]string{"--workspace", dir}, c.args...), getenv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := o.config(getenv)
		if err != nil || cfg.CallBudget != c.want {
			t.Errorf("%v with env %q: %v, %v; want %v", c.args, c.env, cfg.CallBudget, err, c.want)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o644)
	groupWritable := filepath.Join(t.TempDir(), "gw")
	os.WriteFile(groupWritable, []byte("x"), 0o600)
	os.Chmod(groupWritable, 0o660) // past the umask
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workspace", "/does/not/exist"}, "no such file"},
		{[]string{"--workspace", file}, "not a directory"},
		{[]string{"--workspace", "bad name=" + t.TempDir()}, "a name is"},
		{[]string{"--token-file", file}, "lets others read it"},
		{[]string{"--token-file", groupWritable}, "lets others read it"},
		{[]string{"--token", "x", "--token-file", file}, "not both"},
		{[]string{"--allowed-origin", "localhost"}, "scheme://host"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--log-format", "xml"}, "--log-format"},
		{[]string{"--max-body", "0"}, "--max-body"},
		{[]string{"stray"}, "unexpected argument"},
		{[]string{"--diagnostics-timeout", "-1s"}, "--diagnostics-timeout"},
		{[]string{"--call-budget", "-1s"}, "--call-budget"},
	} {
		o, err := parseOptions(c.args, func(string) string { return "" }, io.Discard)
		if err == nil {
			_, err = newLogger(io.Discard, o.logLevel, o.logFormat)
		}
		if err == nil {
			_, _, err = o.config(func(string) string { return "" })
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want %q", c.args, err, c.want)
		}
	}
}

// TestSealKnowsTheFlags: package seal walks the command line without
// the flag package, knowing sandboxd's flags and which take no value; it
// must know every one, or it would not seal a command line with a new
// one, and a token after a new flag without a value would stay on it.
func TestSealKnowsTheFlags(t *testing.T) {
	want := map[string]bool{"h": true, "help": true} // the flag package's own
	newFlagSet(&options{}, io.Discard).VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		want[f.Name] = ok && b.IsBoolFlag()
	})
	if !maps.Equal(seal.Flags, want) {
		t.Errorf("seal.Flags = %v, want %v", seal.Flags, want)
	}
}
