package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
)

func (e *cliEnv) validate(args []string) int {
	var common commonFlags
	fs := newFlagSet("validate", e.stderr, &common)
	cfgPath := fs.String("config", "", "RuntimeConfig YAML file (required)")
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if *cfgPath == "" || fs.NArg() > 0 {
		e.errorf("usage: promptkit-sandbox validate --config FILE")
		return exitUsage
	}
	rt, _, code := e.openRuntime(&common, *cfgPath)
	if code != exitOK {
		return code
	}
	defer func() { _ = rt.Close(context.Background()) }()

	f := rt.File()
	for _, s := range f.Sandboxes {
		served := ""
		if sb, ok := rt.Sandbox(s.Name); ok {
			if p, ok := sb.(interface{ Plugin() string }); ok {
				served = ", plugin " + p.Plugin()
			}
		}
		fmt.Fprintf(e.stdout, "sandbox %s: mode %s%s\n", s.Name, s.Mode, served)
	}
	for _, h := range rt.Hooks() {
		phases := "(no phases)"
		if h.Type != wire.HookEval {
			phases = strings.Join(h.Phases, ",")
		}
		fmt.Fprintf(e.stdout, "hook %s: %s %s %s, sandbox %s, timeout %s, command %s\n",
			h.Name, h.Type, phases, h.Mode, h.SandboxName(), h.Timeout, h.Command)
	}
	fmt.Fprintf(e.stdout, "%s: ok (%d sandboxes, %d hooks)\n", f.Path, len(f.Sandboxes), len(rt.Hooks()))
	return exitOK
}
