package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/altairalabs/promptkit-sandbox/hooks"
	"github.com/altairalabs/promptkit-sandbox/hooks/wire"
	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func (e *cliEnv) hook(args []string) int {
	if len(args) == 0 || args[0] != "run" {
		e.errorf("usage: promptkit-sandbox hook run --config FILE --hook NAME --phase PHASE [--input FILE|-]")
		return exitUsage
	}
	return e.hookRun(args[1:])
}

func (e *cliEnv) hookRun(args []string) int {
	var common commonFlags
	fs := newFlagSet("hook run", e.stderr, &common)
	cfgPath := fs.String("config", "", "RuntimeConfig YAML file (required)")
	name := fs.String("hook", "", "name of the hook under spec.hooks (required)")
	phase := fs.String("phase", "", "phase to fire, e.g. before_call (not used by eval hooks)")
	input := fs.String("input", "-", "payload JSON file, or - for stdin")
	maxInput := maxInputFlag(fs)
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		e.errorf("hook run: unexpected argument %q", fs.Arg(0))
		return exitUsage
	}
	if *cfgPath == "" || *name == "" {
		e.errorf("hook run: --config and --hook are required")
		return exitUsage
	}
	if log, err := common.logger(e.stderr); err == nil {
		// Sent at exit, after rt.Close has stopped the plugins.
		tp, flushSpans := startTracing("promptkit-sandbox", log)
		defer flushSpans()
		common.telemetry.tracer = tp
	}
	rt, log, code := e.openRuntime(&common, *cfgPath)
	if code != exitOK {
		return code
	}
	h, ok := rt.Hook(*name)
	if !ok {
		_ = rt.Close(context.Background())
		e.errorf("%v", &hooks.UnknownHookError{Name: *name, Known: hookNames(rt)})
		return exitUsage
	}
	if h.Type != wire.HookEval && *phase == "" {
		_ = rt.Close(context.Background())
		e.errorf("hook run: --phase is required for a %s hook (its phases: %s)", h.Type, strings.Join(h.Phases, ", "))
		return exitUsage
	}
	data, err := e.readInput(*input, int64(*maxInput))
	if err != nil {
		_ = rt.Close(context.Background())
		e.errorf("hook run: %v", err)
		return exitUsage
	}
	if h.Type == wire.HookEval {
		*phase = "" // eval hooks have no phases
	}
	p, err := wire.DecodeInput(h.Type, *phase, data)
	if err != nil {
		_ = rt.Close(context.Background())
		e.errorf("hook run: %v", err)
		return exitUsage
	}
	releaseInput(&data)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := rt.Call(ctx, *name, p)
	// An observe hook runs in the background: give it its own timeout (plus
	// the grace for the sandbox's report) to finish before the process
	// exits.
	closeCtx, cancel := context.WithTimeout(ctx, h.Timeout+sandbox.Grace)
	defer cancel()
	if cerr := rt.Close(closeCtx); cerr != nil {
		log.Warn("closing runtime", "error", cerr)
	}
	if err != nil {
		e.errorf("hook run: %v", err)
		return exitUsage
	}
	out, err := json.Marshal(d)
	if err != nil {
		e.errorf("hook run: encode decision: %v", err)
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "%s\n", out)
	if !d.Allow {
		return exitDenied
	}
	return exitOK
}

// collectOver is the input size from which hook run collects the input's
// buffer as soon as it is decoded.
const collectOver = 1 << 20

// releaseInput drops the input once it is decoded, and with a large one
// collects it at once: the hook's stdin, about as large, is encoded next,
// and can then take its place rather than grow the heap past both.
func releaseInput(data *[]byte) {
	n := len(*data)
	*data = nil
	if n >= collectOver {
		runtime.GC()
	}
}

func (e *cliEnv) readInput(path string, limit int64) ([]byte, error) {
	if path == "-" {
		data, err := bounded.Read(e.stdin, limit, "the input on stdin", maxInputHint)
		if err != nil {
			return nil, fmt.Errorf("read input from stdin: %w", err)
		}
		if len(data) >= collectOver {
			// A pipe is read in chunks, then joined: collected now, the
			// chunks make room for the decoded input instead of growing
			// the heap past both.
			runtime.GC()
		}
		return data, nil
	}
	data, err := bounded.ReadFile(path, limit, "input file "+path, maxInputHint)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("input file %s does not exist", path)
		}
		return nil, fmt.Errorf("read input: %w", err)
	}
	return data, nil
}

func hookNames(rt *hooks.Runtime) []string {
	var names []string
	for _, h := range rt.Hooks() {
		names = append(names, h.Name)
	}
	return names
}
