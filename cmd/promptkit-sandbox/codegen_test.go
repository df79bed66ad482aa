package main

import (
	"flag"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

func TestParseInterspersed(t *testing.T) {
	for _, tt := range []struct {
		args       []string
		positional []string
		socket     string
		json       bool
	}{
		{args: []string{"ID", "--socket", "/s"}, positional: []string{"ID"}, socket: "/s"},
		{args: []string{"--socket", "/s", "ID"}, positional: []string{"ID"}, socket: "/s"},
		{args: []string{"A", "--json", "B", "--socket=/s"}, positional: []string{"A", "B"}, socket: "/s", json: true},
		{args: []string{"A", "--", "--json"}, positional: []string{"A", "--json"}},
		{args: []string{"--", "-x"}, positional: []string{"-x"}},
		{args: nil},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		socket := fs.String("socket", "", "")
		asJSON := fs.Bool("json", false, "")
		got, ok, code := parseInterspersed(fs, tt.args)
		if !ok || code != exitOK || !slices.Equal(got, tt.positional) || *socket != tt.socket || *asJSON != tt.json {
			t.Errorf("%q: positional %q ok %v code %d socket %q json %v; want %q %q %v", tt.args, got, ok, code, *socket, *asJSON, tt.positional, tt.socket, tt.json)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, ok, code := parseInterspersed(fs, []string{"ID", "--bogus"}); ok || code != exitUsage {
		t.Errorf("an unknown flag after the ID: ok %v code %d, want a usage error", ok, code)
	}
}

// TestCodegenFlagsAfterPositional: every codegen subcommand takes its
// flags after an argument, as docs/cli.md writes "codegen down ID
// [--socket PATH]": down reaches for the serve on --socket (none there:
// 125) instead of refusing the order (2); stray arguments stay usage
// errors.
func TestCodegenFlagsAfterPositional(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	code, _, stderr := cli(t, "", "codegen", "down", "cg-0123", "--socket", sock)
	if code != exitSandbox || !strings.Contains(stderr, "no serve is listening on "+sock) {
		t.Errorf("codegen down ID --socket: exit %d, stderr %q; want 125 naming %s", code, stderr, sock)
	}
	for _, args := range [][]string{
		{"codegen", "down", "cg-0123", "--socket", sock, "extra"},
		{"codegen", "down", "--socket", sock},
		{"codegen", "down", "cg-0123", "--bogus"},
		{"codegen", "ls", "extra", "--socket", sock},
		{"codegen", "up", "--config", "x.yaml", "--sandbox", "code", "extra"},
		{"codegen", "up", "extra", "--config", "x.yaml", "--sandbox", "code"},
	} {
		if code, _, stderr := cli(t, "", args...); code != exitUsage || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 with a message", args, code, stderr)
		}
	}
	code, _, stderr = cli(t, "", "codegen", "ls", "--socket", sock, "--json")
	if code != exitSandbox || !strings.Contains(stderr, "no serve is listening on "+sock) {
		t.Errorf("codegen ls --socket --json: exit %d, stderr %q", code, stderr)
	}
}

// TestCodegenUpNotAProvider: up of a sandbox whose mode is no provider
// mode is a configuration error, exit 2 as docs/cli.md lists, whether
// the mode is direct or a plugin's sandbox mode.
func TestCodegenUpNotAProvider(t *testing.T) {
	cfg := writeConfig(t, t.TempDir(), "spec:\n  sandboxes:\n    d:\n      mode: direct\n")
	code, _, stderr := cli(t, "", "codegen", "up", "--plugin-dir", t.TempDir(), "--config", cfg, "--sandbox", "d", "--foreground")
	if code != exitUsage || !strings.Contains(stderr, "mode direct is not a provider mode") {
		t.Errorf("direct: exit %d, stderr %q; want 2 saying it is not a provider mode", code, stderr)
	}

	dir, cfg, _ := pluginSetup(t) // skips under -short
	code, _, stderr = cli(t, "", "codegen", "up", "--plugin-dir", dir, "--config", cfg, "--sandbox", "box", "--foreground")
	if code != exitUsage || !strings.Contains(stderr, "mode test_direct of plugin test 1.0.0") || !strings.Contains(stderr, "not a provider mode") {
		t.Errorf("a plugin's sandbox mode: exit %d, stderr %q; want 2 saying it is not a provider mode", code, stderr)
	}
}

// TestPrintListShowsDeadSandboxes: ls shows each sandbox's state, and
// why a dead one died, with how to release it.
func TestPrintListShowsDeadSandboxes(t *testing.T) {
	var b strings.Builder
	printList(&b, []plugin.Provisioned{
		{ID: "cg-1", Name: "code", Mode: "docker_codegen", Details: map[string]string{provision.State: provision.StateRunning}},
		{ID: "cg-2", Name: "code", Mode: "docker_codegen", Details: map[string]string{provision.State: provision.StateDead + "stopped; its output ended: boom (exit code 7)"}},
		{ID: "k-3", Name: "kube", Mode: "kubectl_codegen"},
	})
	lines := strings.Split(b.String(), "\n")
	for i, want := range [][]string{{"ID", "SANDBOX", "MODE", "STATE"}, {"cg-1", "code", "docker_codegen", "running"}, {"cg-2", "code", "docker_codegen", "dead"}, {"k-3", "kube", "kubectl_codegen", "-"}} {
		if f := strings.Fields(lines[i]); len(f) < 4 || !slices.Equal(f[:4], want) {
			t.Errorf("line %d: %q, want it to start %q", i, lines[i], want)
		}
	}
	if want := "cg-2 is dead: stopped; its output ended: boom (exit code 7) (release it with: promptkit-sandbox codegen down cg-2)"; lines[4] != want {
		t.Errorf("after the table: %q, want %q", lines[4], want)
	}
}
