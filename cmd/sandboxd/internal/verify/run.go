package verify

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/reportdir"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// tailBytes is how much raw output is kept for a failure no parser
// understood.
const tailBytes = 4 << 10

// run runs one step in cwd and parses its output as it streams. A
// non-zero exit or a timeout is a result; errors are for a step that
// could not run or a caller that went away.
func (v *Verifier) run(ctx context.Context, st Step, cwd string, timeout time.Duration, progress func(tool, line string)) (StepResult, error) {
	res := StepResult{Tool: st.Tool}
	bin, err := shell.LookPath(st.Command, v.opts.Env)
	if err != nil {
		if st.Optional {
			res.Absent = true
			return res, nil
		}
		return res, fmt.Errorf("%s: %w", st.Tool, err)
	}
	parser := st.NewParser()
	args := st.Args
	var reports *reportdir.Dir
	if st.ReportFlag != "" {
		// Outside the workspace, so the report never shows up in it, and
		// where the tool (running the agent's code) can write it but not
		// swap it for a link to what the agent may not read.
		if reports, err = reportdir.New("sandboxd-report-", v.opts.Credential); err != nil {
			return res, fmt.Errorf("%s: %w", st.Tool, err)
		}
		defer reports.Remove()
		report, err := reports.File("report")
		if err != nil {
			return res, fmt.Errorf("%s: %w", st.Tool, err)
		}
		// Before any "--", after which it would be taken for a path.
		at := slices.Index(args, "--")
		if at < 0 {
			at = len(args)
		}
		args = slices.Insert(slices.Clone(args), at, st.ReportFlag+report)
	}
	// PWD must match the directory: the go command trusts it for the
	// paths it prints, and sandboxd's own would be wrong.
	env := shell.MergeEnv(v.opts.Env, append([]string{"PWD=" + cwd}, st.Env...), nil)
	// Each stream keeps its own tail: a chatty stdout must not push the
	// one line on stderr that says what went wrong out of view.
	raw := [2]*tail{newTail(tailBytes), newTail(tailBytes)}
	var mu sync.Mutex
	sink := func(stream Stream) *lineWriter {
		return &lineWriter{handle: func(line []byte) {
			raw[stream].add(line)
			mu.Lock()
			defer mu.Unlock()
			parser.Line(stream, line)
			if progress == nil {
				return
			}
			if text, ok := progressLine(line); ok {
				progress(st.Tool, text)
			}
		}}
	}
	stdout, stderr := sink(Stdout), sink(Stderr)
	p, err := shell.Start(ctx, sandbox.Request{
		Command: bin,
		Args:    args,
		Env:     env,
	}, shell.Options{
		Dir:        cwd,
		Timeout:    timeout,
		CleanEnv:   true,
		Credential: v.opts.Credential,
		Isolated:   true,
		// The sinks bound memory themselves and must see every byte: the
		// end of go test's output holds the verdicts.
		OutputLimit: math.MaxInt,
		StdoutSink:  stdout,
		StderrSink:  stderr,
	})
	if err != nil {
		return res, fmt.Errorf("%s: start in %q: %w", st.Tool, cwd, err)
	}
	_, werr := p.Wait()
	// Wait returns after the last write to either sink.
	stdout.flush()
	stderr.flush()

	var xe *sandbox.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &xe):
		res.ExitCode = xe.Code
	case ctx.Err() != nil:
		return res, fmt.Errorf("%s: %w", st.Tool, werr)
	case sandbox.KindOf(werr) == sandbox.KindTimeout:
		res.TimedOut, res.ExitCode = true, -1
	default:
		return res, fmt.Errorf("%s: %w", st.Tool, werr)
	}
	if reports != nil {
		if rr, ok := parser.(ReportReader); ok {
			rr.Report(readReport(reports))
		}
	}
	res.Outcome = parser.Finish(res.ExitCode)
	if (res.ExitCode != 0 || res.TimedOut) && len(res.Outcome.Findings) == 0 {
		res.Tail = raw[Stdout].String()
		if errTail := raw[Stderr].String(); errTail != "" {
			res.Tail += "--- stderr ---\n" + errTail
		}
	}
	return res, nil
}

// maxReport bounds the report file a step's tool writes.
const maxReport = 64 << 20

// readReport is the report file's content, at most maxReport bytes of
// it, or nil when the tool wrote none (it failed before it could) or
// replaced the file rather than write it.
func readReport(d *reportdir.Dir) []byte {
	data, err := d.Read("report", maxReport)
	if err != nil {
		return nil
	}
	return data
}
