package verify

// Step is one command a check runs and how to read its output.
type Step struct {
	// Tool names the step in the summary, e.g. "go vet".
	Tool string
	// Command is the program, looked up on the PATH of the Verifier's
	// environment; Args follow it.
	Command string
	Args    []string
	// Optional steps whose program is not installed are skipped and the
	// summary says so; a required one that is missing is an error.
	Optional bool
	// NewParser returns a fresh parser for one run.
	NewParser func() Parser
	// Dir, when set, is the workspace-relative directory the step runs
	// in, for tools that name files relative to their project's root
	// (pytest, cargo); empty is the directory the call asked for.
	Dir string
	// Env adds "K=V" entries to the Verifier's environment, replacing
	// those of the same name.
	Env []string
	// ReportFlag, when set, makes the step write a report file: the
	// runner adds ReportFlag followed by the path of a fresh file outside
	// the workspace as one argument (e.g. "--junitxml="), at the end of
	// Args or before their "--", and
	// hands what the tool wrote there to the parser, which must then be
	// a ReportReader.
	ReportFlag string
}

// ReportReader is a Parser that also reads a report file a tool wrote
// (see Step.ReportFlag). Report is called once, before Finish, with
// nil when the tool wrote no file.
type ReportReader interface {
	Parser
	Report(data []byte)
}

// Parser reads one command's output a line at a time, as it arrives. It
// must accept any bytes without panicking. Lines from stdout and stderr
// come interleaved but never concurrently.
type Parser interface {
	Line(stream Stream, line []byte)
	// Finish is called once the command has ended (exitCode -1 if it
	// did not end by itself) and says what was found.
	Finish(exitCode int) Outcome
}

// Stream says where a line of output came from.
type Stream int

const (
	Stdout Stream = iota
	Stderr
)

// Outcome is what a parser made of one command's output.
type Outcome struct {
	Findings []Finding
	// Dropped counts findings past the parser's cap.
	Dropped int
	// Summary adds the parser's own tally to the step's summary, e.g.
	// "3 passed, 1 failed".
	Summary string
	// Failed and Passed name the tests that ran and failed, or passed
	// (or were skipped), up to maxTracked each.
	Failed, Passed []TestID
}

// maxFindings bounds the findings one command may produce in memory.
const maxFindings = 2000

// collector gathers findings up to maxFindings, counting the rest.
type collector struct {
	list    []Finding
	dropped int
}

func (c *collector) add(f Finding) {
	if len(c.list) >= maxFindings {
		c.dropped++
		return
	}
	f.Message = oneLine(f.Message)
	f.File = truncate(f.File, maxPath)
	f.Package = truncate(f.Package, maxPath)
	f.Rule = truncate(f.Rule, 200)
	f.Test = truncate(f.Test, 1000)
	if f.Severity == "" {
		f.Severity = SeverityError
	}
	c.list = append(c.list, f)
}

func (c *collector) outcome(summary string) Outcome {
	return Outcome{Findings: c.list, Dropped: c.dropped, Summary: summary}
}
