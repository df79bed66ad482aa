package config

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestModesFor(t *testing.T) {
	yaml := "spec:\n  plugins:\n    dirs: [p1, /p2]\n  sandboxes:\n    s: {mode: docker_run}\n"
	dir, err := filepath.Abs("conf")
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	calls := 0
	opts := testOptions(t)
	reg := opts.Modes
	opts.Modes = nil
	opts.ModesFor = func(dirs []string) (ModeSet, error) {
		calls++
		asked = dirs
		return reg, nil
	}
	if _, err := Parse("conf/r.yaml", []byte(yaml), opts); err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "p1"), "/p2"}; calls != 1 || !reflect.DeepEqual(asked, want) {
		t.Errorf("ModesFor called %d times with %q; want once with %q", calls, asked, want)
	}

	opts.ModesFor = func([]string) (ModeSet, error) {
		return nil, errors.New("plugin promptkit-sandbox-docker: refused: writable by others")
	}
	_, err = Parse("r.yaml", []byte(yaml), opts)
	want := "r.yaml:2:3: spec.plugins: plugin promptkit-sandbox-docker: refused: writable by others"
	if err == nil || err.Error() != want {
		t.Errorf("got:  %v\nwant: %s", err, want)
	}

	// Broken plugin dirs are reported as such; discovery is not attempted.
	opts.ModesFor = func([]string) (ModeSet, error) {
		t.Error("ModesFor called although spec.plugins is invalid")
		return nil, nil
	}
	_, err = Parse("r.yaml", []byte("spec:\n  plugins: {dirs: [\"\"]}\n  sandboxes:\n    s: {mode: docker_run}\n"), opts)
	want = "r.yaml:2:20: spec.plugins: dirs[0] is empty"
	if err == nil || err.Error() != want {
		t.Errorf("got:  %v\nwant: %s", err, want)
	}
}

func TestModesFromARegistryThatServesDirect(t *testing.T) {
	reg := sandbox.NewRegistry()
	for _, m := range []string{Direct, "zeta"} {
		if err := reg.Register(m, func(context.Context, string, map[string]any) (sandbox.Sandbox, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Parse("r.yaml", []byte("spec:\n  sandboxes:\n    s: {mode: alpha}\n"), Options{Modes: reg})
	want := `r.yaml:3:15: spec.sandboxes.s: unknown sandbox mode "alpha" (known modes: direct, zeta)`
	if err == nil || err.Error() != want {
		t.Errorf("got:  %v\nwant: %s", err, want)
	}
}

func TestProblemsAddedAfterLoading(t *testing.T) {
	f, err := Parse("runtime.yaml", []byte("spec:\n  sandboxes:\n    box: {mode: docker_run}\n  hooks:\n    h: {command: x, hook: eval}\n"), testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	var errs Error
	if errs.Err() != nil {
		t.Fatal("an Error without problems must not be an error")
	}
	errs.Add(f.SandboxProblem(f.Sandboxes[0], `config: unknown key "imag"`), f.HookProblem(f.Hooks[0], "boom"))
	want := "runtime.yaml:3:5: spec.sandboxes.box: config: unknown key \"imag\"\nruntime.yaml:5:5: spec.hooks.h: boom"
	if err := errs.Err(); err == nil || err.Error() != want {
		t.Errorf("got:  %v\nwant: %s", err, want)
	}
}

func TestProblemFormat(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{File: "a.yaml", Line: 3, Column: 7, Entry: "spec", Msg: "m"}, "a.yaml:3:7: spec: m"},
		{Problem{File: "a.yaml", Line: 3, Msg: "m"}, "a.yaml:3: m"},
		{Problem{File: "a.yaml", Msg: "m"}, "a.yaml: m"},
		{Problem{Line: 2, Column: 1, Entry: "spec.hooks", Msg: "m"}, "2:1: spec.hooks: m"},
		{Problem{Entry: "spec", Msg: "m"}, "spec: m"},
	} {
		if got := tc.p.Error(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.p, got, tc.want)
		}
	}
}
