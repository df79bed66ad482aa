package server

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// maxCallSecrets bounds the secrets one call may name.
const maxCallSecrets = 64

// minSecretLen is the shortest value handed to a command: shared/scrub
// does not redact shorter ones (they would redact ordinary text), so a
// command printing one would show it.
const minSecretLen = 4

// registerSecretTools adds secrets_available. Secrets are used by
// reference: a tool that runs commands takes their names in its secrets
// argument and puts the values in that call's environment alone. No tool
// returns a value.
func (s *Server) registerSecretTools(m *mcpserver.MCPServer) {
	addTool(s, m, mcp.NewTool("secrets_available",
		mcp.WithDescription("List the names of the secrets configured for this sandbox (never their values). Pass names in the secrets argument of Bash, watch_process, run_tests, run_lint, run_typecheck or run_failing_tests to set those environment variables for that call only; output that prints a value comes back redacted."),
		mcp.WithReadOnlyHintAnnotation(true),
	), s.secretsAvailable)
}

// secretsParam is the secrets argument of the tools that run commands;
// withSecrets is its field in their arguments.
func secretsParam() mcp.ToolOption {
	return mcp.WithArray("secrets", mcp.WithStringItems(),
		mcp.Description("Names of secrets (see secrets_available) to set as environment variables for this call only; printed values are redacted"))
}

type withSecrets struct {
	Secrets []string `json:"secrets"`
}

// usableSecrets are the configured secrets' names that a call may name,
// sorted.
func (s *Server) usableSecrets() []string {
	var names []string
	for name, value := range s.cfg.Secrets {
		if len(value) >= minSecretLen {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func (s *Server) secretsAvailable(context.Context, struct{}) (string, error) {
	names := s.usableSecrets()
	if len(names) == 0 {
		return "No secrets are configured (sandboxd --secret-env).", nil
	}
	return fmt.Sprintf("%d secrets are available by name (pass them in a tool's secrets argument):\n%s", len(names), strings.Join(names, "\n")), nil
}

// callSecrets returns the "NAME=value" entries for the environment of a
// call whose secrets argument is names (nil if it has none). An unknown
// name is an error that names it and the known ones, never a value.
func (s *Server) callSecrets(names []string) ([]string, error) {
	if names == nil {
		return nil, nil
	}
	if len(names) > maxCallSecrets {
		return nil, fmt.Errorf("secrets: %d names, at most %d are allowed", len(names), maxCallSecrets)
	}
	env := make([]string, 0, len(names))
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		value, ok := s.cfg.Secrets[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("secrets: unknown secret %q; %s", name, s.knownSecrets())
		case len(value) < minSecretLen:
			return nil, fmt.Errorf("secrets: secret %q is shorter than %d bytes, too short to be redacted from output, so it is not handed to commands", name, minSecretLen)
		}
		env = append(env, name+"="+value)
	}
	return env, nil
}

func (s *Server) knownSecrets() string {
	names := s.usableSecrets()
	if len(names) == 0 {
		return "no secrets are configured"
	}
	return "the available secrets are: " + strings.Join(names, ", ")
}
