package server

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/goedit"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/testcover"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/verify"
)

// DefaultCoverageTimeout bounds a tests_covering call that gives no
// timeout: building the package's tests and running each once.
const DefaultCoverageTimeout = 5 * time.Minute

// registerCoverageTools adds tests_covering. It runs the project's
// tests, so read-only servers do not offer it, like run_tests.
func (s *Server) registerCoverageTools(m *mcpserver.MCPServer, ws []mcp.ToolOption) {
	addTool(s, m, mcp.NewTool("tests_covering", append(slices.Clone(ws),
		mcp.WithDescription(fmt.Sprintf("Which tests of a Go package run a line of one of its files, from per-test coverage: the package's tests are built once with coverage and each top-level test (Test, Fuzz seeds, Example) is run alone; a test covers a line when a block it executed spans that line. With line, the tests covering it; without, each function of the file with the tests that run any of it. Computed on the first ask (one run per test, at most %d tests, %d at once) and cached until a .go file of the package changes; the result says which. A failing test still counts for what it ran.", testcover.DefaultMaxTests, testcover.DefaultParallel)),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("A .go file of the package (not a _test.go file)")),
		mcp.WithNumber("line", mcp.Description("The 1-based line; omit for a summary by function")),
		mcp.WithNumber("timeout", mcp.Description(fmt.Sprintf("Timeout for computing the coverage in milliseconds (default %d, max %d); it kills every process it started, and a result cut short is not cached",
			DefaultCoverageTimeout.Milliseconds(), verify.MaxTimeout.Milliseconds()))),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	)...), inSpace(s, s.testsCovering))
}

type testsCoveringArgs struct {
	inWorkspace
	FilePath string  `json:"file_path" mcp:"required"`
	Line     *int    `json:"line"` // nil: a summary by function
	Timeout  float64 `json:"timeout"`
}

func (s *Server) testsCovering(ctx context.Context, sp *space, a testsCoveringArgs) (string, error) {
	path, line := a.FilePath, 0
	if a.Line != nil {
		if line = *a.Line; line < 1 {
			return "", fmt.Errorf("line %d: want a line number from 1", line)
		}
	}
	ms := a.Timeout
	if ms < 0 || ms > float64(verify.MaxTimeout.Milliseconds()) {
		return "", fmt.Errorf("timeout %v: want milliseconds from 0 to %d", ms, verify.MaxTimeout.Milliseconds())
	}
	timeout := time.Duration(ms * float64(time.Millisecond))
	if timeout == 0 {
		timeout = DefaultCoverageTimeout
	}
	fc, err := sp.cover.File(ctx, path, timeout)
	if err != nil {
		return "", fmt.Errorf("tests_covering %q: %w", path, err)
	}
	var b strings.Builder
	if line > 0 {
		tests := fc.Covering(line)
		fmt.Fprintf(&b, "%s:%d is run by %s of the package's %s", fc.File, line, countOf(len(tests)), count(len(fc.Tests), "test"))
		if len(tests) > 0 {
			b.WriteString(": " + strings.Join(tests, ", "))
		}
	} else {
		src, err := sp.ws.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("tests_covering %q: %w", path, err)
		}
		byFunction(&b, fc, src)
	}
	coverageNote(&b, fc)
	return b.String(), nil
}

func countOf(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

// byFunction lists each function of the file with the tests that run
// any of its lines.
func byFunction(b *strings.Builder, fc *testcover.FileCoverage, src []byte) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, fc.File, src, parser.SkipObjectResolution)
	if err != nil {
		fmt.Fprintf(b, "%s does not parse, so it has no functions to list: %v", fc.File, err)
		return
	}
	fmt.Fprintf(b, "Tests of the package (%s) covering %s, by function:", count(len(fc.Tests), "test"), fc.File)
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		from, to := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		tests := fc.CoveringRange(from, to)
		who := "none"
		if len(tests) > 0 {
			who = strings.Join(tests, ", ")
		}
		fmt.Fprintf(b, "\n%s (lines %d-%d): %s", goedit.Label(fd), from, to, who)
	}
}

// coverageNote says where the coverage came from and what it lacks.
func coverageNote(b *strings.Builder, fc *testcover.FileCoverage) {
	took := fc.Took.Round(time.Millisecond)
	switch {
	case fc.Incomplete:
		fmt.Fprintf(b, "\nCoverage: INCOMPLETE, the time ran out after %s; tests that did not finish are missing, and nothing was cached", took)
	case fc.Cached:
		fmt.Fprintf(b, "\nCoverage: from the cache (computed in %s; kept until a .go file of the package changes)", took)
	default:
		fmt.Fprintf(b, "\nCoverage: computed now in %s, %s; cached until a .go file of the package changes", took, count(len(fc.Tests), "test run"))
	}
	if len(fc.Failed) > 0 {
		fmt.Fprintf(b, "\nFailed (what they ran still counts): %s", strings.Join(fc.Failed, ", "))
	}
	if fc.Skipped > 0 {
		fmt.Fprintf(b, "\nNot run: %s over the limit of %d", count(fc.Skipped, "test"), testcover.DefaultMaxTests)
	}
}
