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
	m.AddTool(mcp.NewTool("run_tests", common(
		mcp.WithDescription("Run the project's tests (Go: go test -json -count=1; Rust: cargo test; Python: pytest; Node.js: node --test). Failed tests are findings with the rule test:TestName (Go: their file:line log lines and one line per failed test); the summary counts passed, failed and skipped tests and names packages that failed to build."+verifyResult),
		mcp.WithString("packages", mcp.Description("Space-separated package patterns to test; default ./...")),
		mcp.WithString("run", mcp.Description("Only tests matching this regular expression (go test -run)")),
	)...), s.handler("run_tests", s.inSpace(s.runTests)))
	m.AddTool(mcp.NewTool("run_lint", common(
		mcp.WithDescription("Run the project's linters (Go: go vet, and staticcheck when it is installed; Rust: cargo clippy; Python: flake8; Node.js: eslint); the rule is the analyzer or check, e.g. printf, SA4006, clippy::ptr_arg, F401, no-unused-vars. The summary says which linters ran and which are not installed."+verifyResult),
	)...), s.handler("run_lint", s.inSpace(s.runLint)))
	m.AddTool(mcp.NewTool("run_typecheck", common(
		mcp.WithDescription("Type-check the project without running it (Go: compile every package and its tests, rule compile; Rust: cargo check; Python: mypy; TypeScript: tsc --noEmit)."+verifyResult),
	)...), s.handler("run_typecheck", s.inSpace(s.runTypecheck)))
	s.registerFailingTestTools(m, ws)
}

// verifyRequest reads the arguments every check takes.
func (s *Server) verifyRequest(req mcp.CallToolRequest) (verify.Request, error) {
	ms := req.GetFloat("timeout", 0)
	if ms < 0 || ms > float64(verify.MaxTimeout.Milliseconds()) {
		return verify.Request{}, fmt.Errorf("timeout %v: want milliseconds from 0 to %d", ms, verify.MaxTimeout.Milliseconds())
	}
	env, err := s.callSecrets(req)
	if err != nil {
		return verify.Request{}, err
	}
	return verify.Request{
		Path:    req.GetString("path", ""),
		Timeout: time.Duration(ms * float64(time.Millisecond)),
		Env:     env,
	}, nil
}

func (s *Server) runTests(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error) {
	vr, err := s.verifyRequest(req)
	if err != nil {
		return "", err
	}
	vr.Packages = strings.Fields(req.GetString("packages", ""))
	vr.Run = req.GetString("run", "")
	r, err := sp.verify.Test(ctx, vr)
	if err != nil {
		return "", err
	}
	s.recordTests(ctx, sp, vr.Path, r)
	return r.String(), nil
}

func (s *Server) runLint(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error) {
	vr, err := s.verifyRequest(req)
	if err != nil {
		return "", err
	}
	return report(sp.verify.Lint(ctx, vr))
}

func (s *Server) runTypecheck(ctx context.Context, sp *space, req mcp.CallToolRequest) (string, error) {
	vr, err := s.verifyRequest(req)
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
