package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/verify"
)

const verifyResult = ` Findings come one per line as file:line:col: rule: message, paths relative to the workspace, then a one-line summary; when a command fails without a finding, the tail of its output follows.`

// registerVerifyTools adds run_tests, run_lint and run_typecheck. They
// run the project's own toolchain, which can do anything a build can, so
// read-only servers do not offer them; they are not destructive in the
// MCP sense, as they are meant to change nothing in the workspace.
func (s *Server) registerVerifyTools(m *mcpserver.MCPServer, ws []mcp.ToolOption) {
	common := func(opts ...mcp.ToolOption) []mcp.ToolOption {
		all := append(slices.Clone(ws), opts...)
		return append(all,
			mcp.WithString("path", mcp.Description("Directory to check, inside a project (found by its marker here or above: go.mod, Cargo.toml, pyproject.toml/setup.py/setup.cfg/pytest.ini/tox.ini, package.json/tsconfig.json; the nearest wins); default the workspace root")),
			mcp.WithNumber("timeout", mcp.Description(fmt.Sprintf("Timeout for the whole call in milliseconds (default %d, max %d); it kills every process the check started",
				verify.DefaultTimeout.Milliseconds(), verify.MaxTimeout.Milliseconds()))),
			secretsParam(),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithOpenWorldHintAnnotation(false),
		)
	}
	budget := s.budgetNote("run")
	addTool(s, m, mcp.NewTool("run_tests", common(
		mcp.WithDescription("Run the project's tests (Go: go test -json -count=1; Rust: cargo test; Python: pytest; Node.js: node --test). Failed tests are findings with the rule test:TestName (Go: their file:line log lines and one line per failed test); the summary counts passed, failed and skipped tests and names packages that failed to build."+verifyResult+budget),
		mcp.WithString("packages", mcp.Description("Space-separated package patterns to test; default ./...")),
		mcp.WithString("run", mcp.Description("Only tests matching this regular expression (go test -run)")),
	)...), inSpace(s, budgeted(s, "run_tests", s.runTests)))
	addTool(s, m, mcp.NewTool("run_lint", common(
		mcp.WithDescription("Run the project's linters (Go: go vet, and staticcheck when it is installed; Rust: cargo clippy; Python: flake8; Node.js: eslint); the rule is the analyzer or check, e.g. printf, SA4006, clippy::ptr_arg, F401, no-unused-vars. The summary says which linters ran and which are not installed."+verifyResult+budget),
	)...), inSpace(s, budgeted(s, "run_lint", s.runLint)))
	addTool(s, m, mcp.NewTool("run_typecheck", common(
		mcp.WithDescription("Type-check the project without running it (Go: compile every package and its tests, rule compile; Rust: cargo check; Python: mypy; TypeScript: tsc --noEmit)."+verifyResult+budget),
	)...), inSpace(s, budgeted(s, "run_typecheck", s.runTypecheck)))
	s.registerFailingTestTools(m, ws)
}

// runArgs are the arguments of every run under the call budget.
type runArgs struct {
	Timeout float64 `json:"timeout"`
	withSecrets
}

func (a runArgs) timeoutMS() float64 { return a.Timeout }

// checkArgs are the arguments of run_lint and run_typecheck, and of
// run_tests with more.
type checkArgs struct {
	inWorkspace
	Path string `json:"path"`
	runArgs
}

func (a checkArgs) runPath() string { return a.Path }

type runTestsArgs struct {
	checkArgs
	Packages string `json:"packages"`
	Run      string `json:"run"`
}

// verifyRequest is a check of the project at path.
func (s *Server) verifyRequest(ctx context.Context, path string, a runArgs) (verify.Request, error) {
	ms := a.Timeout
	if ms < 0 || ms > float64(verify.MaxTimeout.Milliseconds()) {
		return verify.Request{}, fmt.Errorf("timeout %v: want milliseconds from 0 to %d", ms, verify.MaxTimeout.Milliseconds())
	}
	env, err := s.callSecrets(a.Secrets)
	if err != nil {
		return verify.Request{}, err
	}
	if err := s.awaitGoCacheSeed(ctx); err != nil {
		return verify.Request{}, err
	}
	return verify.Request{
		Path:    path,
		Timeout: time.Duration(ms * float64(time.Millisecond)),
		Env:     env,
		// A budgeted call shows the end of it if it outlives the budget.
		Progress: progressOf(ctx),
	}, nil
}

func (s *Server) runTests(ctx context.Context, sp *space, a runTestsArgs) (string, error) {
	vr, err := s.verifyRequest(ctx, a.Path, a.runArgs)
	if err != nil {
		return "", err
	}
	vr.Packages = strings.Fields(a.Packages)
	vr.Run = a.Run
	r, err := sp.verify.Test(ctx, vr)
	if err != nil {
		return "", err
	}
	s.recordTests(ctx, sp, vr.Path, r)
	return r.String(), nil
}

func (s *Server) runLint(ctx context.Context, sp *space, a checkArgs) (string, error) {
	vr, err := s.verifyRequest(ctx, a.Path, a.runArgs)
	if err != nil {
		return "", err
	}
	return report(sp.verify.Lint(ctx, vr))
}

func (s *Server) runTypecheck(ctx context.Context, sp *space, a checkArgs) (string, error) {
	vr, err := s.verifyRequest(ctx, a.Path, a.runArgs)
	if err != nil {
		return "", err
	}
	return report(sp.verify.Typecheck(ctx, vr))
}

func report(r *verify.Report, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return r.String(), nil
}

// awaitGoCacheSeed waits until the agent's Go build cache is seeded
// (Config.GoCacheSeeded), or ctx ends.
func (s *Server) awaitGoCacheSeed(ctx context.Context) error {
	if s.cfg.GoCacheSeeded == nil {
		return nil
	}
	select {
	case <-s.cfg.GoCacheSeeded:
		return nil
	default:
	}
	if add := progressOf(ctx); add != nil {
		add("sandboxd", "waiting for the seed of the Go build cache to be copied in")
	}
	select {
	case <-s.cfg.GoCacheSeeded:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the Go build cache to be seeded: %w", context.Cause(ctx))
	}
}
