package verify

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Diagnosis is what checking the files an edit changed found: only
// their own findings, from the fastest checker of each file's language,
// run on the file's package or module rather than the whole project.
type Diagnosis struct {
	Findings []Finding
	// Dropped counts findings the parsers could not keep.
	Dropped int
	// Tools are the checkers that ran to the end, e.g. "go vet".
	Tools []string
	// TimedOut are the checkers the time limit cut off, and NotRun those
	// it left no time for: their findings are missing.
	TimedOut []string
	NotRun   []string
	// Failed says why a checker could not run at all.
	Failed []string
}

// Complete reports whether every checker that applied ran to its end.
func (d *Diagnosis) Complete() bool {
	return len(d.TimedOut) == 0 && len(d.NotRun) == 0 && len(d.Failed) == 0
}

// diagnosis is one checker run for one or more changed files.
type diagnosis struct {
	step Step
	// then, when set, runs after step if step found a compile error:
	// go vet stops at a package's first type error, go build lists them
	// all.
	then *Step
}

// Diagnose checks the changed files (workspace-relative or absolute
// inside it) within timeout. Files no checker applies to (another
// language, a tool that is not installed, a Go file outside any module)
// are left out; it never checks the whole project.
func (v *Verifier) Diagnose(ctx context.Context, files []string, timeout time.Duration) *Diagnosis {
	d := &Diagnosis{}
	changed := map[string]bool{}
	var plan []diagnosis
	planned := map[string]bool{}
	for _, file := range files {
		rel, err := v.ws.Rel(file)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		changed[rel] = true
		dg, ok := v.diagnosisFor(rel)
		if !ok {
			continue
		}
		key := dg.step.Tool + "\x00" + dg.step.Dir + "\x00" + strings.Join(dg.step.Args, "\x00")
		if !planned[key] {
			planned[key] = true
			plan = append(plan, dg)
		}
	}
	deadline := time.Now().Add(timeout)
	seen := map[string]bool{}
	for _, dg := range plan {
		res, ok := v.diagnoseStep(ctx, d, dg.step, deadline)
		if ok && dg.then != nil && hasRule(res.Outcome.Findings, "compile") {
			if more, ok := v.diagnoseStep(ctx, d, *dg.then, deadline); ok {
				res.Outcome.Findings = append(res.Outcome.Findings, more.Outcome.Findings...)
				res.Outcome.Dropped += more.Outcome.Dropped
			}
		}
		d.Dropped += res.Outcome.Dropped
		for _, f := range res.Outcome.Findings {
			if !changed[f.File] || seen[f.String()] {
				continue
			}
			seen[f.String()] = true
			d.Findings = append(d.Findings, f)
		}
	}
	sort.SliceStable(d.Findings, func(i, j int) bool { return less(d.Findings[i], d.Findings[j]) })
	return d
}

// diagnoseStep runs st with what is left of the time, placing its
// findings in the workspace; ok is false when it did not run to its end.
func (v *Verifier) diagnoseStep(ctx context.Context, d *Diagnosis, st Step, deadline time.Time) (StepResult, bool) {
	left := time.Until(deadline)
	if left <= 0 {
		d.NotRun = append(d.NotRun, st.Tool)
		return StepResult{}, false
	}
	dir := filepath.Join(v.ws.Dir(), st.Dir)
	res, err := v.run(ctx, st, dir, left, nil)
	switch {
	case err != nil:
		d.Failed = append(d.Failed, err.Error())
		return res, false
	case res.Absent:
		return res, false
	case res.TimedOut:
		d.TimedOut = append(d.TimedOut, st.Tool)
	default:
		d.Tools = append(d.Tools, st.Tool)
	}
	pl := placer{cwd: dir, rel: v.ws.Rel}
	for i := range res.Outcome.Findings {
		res.Outcome.Findings[i].File = pl.place(res.Outcome.Findings[i].File)
	}
	return res, !res.TimedOut
}

func hasRule(fs []Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

// diagnosisFor picks the checker for a changed file by its extension.
// Every step is Optional: a language whose tool is missing is skipped.
func (v *Verifier) diagnosisFor(rel string) (diagnosis, bool) {
	dir, base := filepath.Dir(rel), filepath.Base(rel)
	switch strings.ToLower(filepath.Ext(rel)) {
	case ".go":
		// go vet needs the module; outside one it has nothing to say.
		if _, ok := v.nearest(dir, "go.mod"); !ok {
			return diagnosis{}, false
		}
		return diagnosis{
			step: Step{Tool: "go vet", Command: "go", Args: []string{"vet", "-json", "."}, Dir: dir, Optional: true, NewParser: newVetParser},
			then: &Step{Tool: "go build", Command: "go", Args: []string{"build", "-gcflags=-e", "-o", "/dev/null", "."}, Dir: dir, Optional: true, NewParser: newVetParser},
		}, true
	case ".py", ".pyi":
		// pyflakes checks one file on its own, without importing it.
		return diagnosis{step: Step{Tool: "pyflakes", Command: "pyflakes3", Args: []string{"./" + base}, Dir: dir, Optional: true, NewParser: newPyflakesParser}}, true
	case ".ts", ".tsx", ".mts", ".cts":
		// --skipLibCheck: the declaration files' own errors are no edit's
		// findings, and checking them is half of tsc's time on a small
		// project (3 CPU-seconds against 1.4 measured in the node image),
		// which is what decides whether it fits the diagnostics' budget.
		if proj, ok := v.nearest(dir, "tsconfig.json"); ok {
			return diagnosis{step: Step{Tool: "tsc", Command: "tsc", Args: []string{"--noEmit", "--pretty", "false", "--skipLibCheck", "-p", "."}, Dir: proj, Optional: true, NewParser: newTscParser}}, true
		}
		return diagnosis{step: Step{Tool: "tsc", Command: "tsc", Args: []string{"--noEmit", "--pretty", "false", "--skipLibCheck", "./" + base}, Dir: dir, Optional: true, NewParser: newTscParser}}, true
	case ".rs":
		crate, ok := v.nearest(dir, "Cargo.toml")
		if !ok {
			return diagnosis{}, false
		}
		return diagnosis{step: Step{Tool: "cargo check", Command: "cargo", Args: cargoArgs("check", "--all-targets"), Dir: crate, Optional: true, NewParser: newCargoParser(false)}}, true
	}
	return diagnosis{}, false
}

// nearest is the closest directory from dir up to the workspace root
// that holds marker.
func (v *Verifier) nearest(dir, marker string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if ok, err := isFile(v.ws, filepath.Join(d, marker)); err == nil && ok {
			return d, true
		}
		if d == "." || d == "/" {
			return "", false
		}
	}
}
