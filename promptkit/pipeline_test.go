package promptkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	pkconfig "github.com/AltairaLabs/PromptKit/pkg/config"
	"github.com/AltairaLabs/PromptKit/runtime/hooks"
	"github.com/AltairaLabs/PromptKit/runtime/types"
)

// pipelineConfig is a RuntimeConfig binding the verdict hook as provider,
// tool and session hooks, filter and observe, in sandbox b (none when
// b.name is empty: PromptKit's own direct sandbox).
func pipelineConfig(b backend) string {
	var sb strings.Builder
	sb.WriteString("apiVersion: promptkit.altairalabs.ai/v1alpha1\nkind: RuntimeConfig\nspec:\n")
	sandbox := ""
	if b.name != "" {
		sb.WriteString("  sandboxes:\n    " + b.name + ":\n" + indent(b.entry, 6))
		sandbox = "      sandbox: " + b.name + "\n"
	}
	sb.WriteString("  hooks:\n")
	hook := func(name, typ, phases, mode string, timeoutMs int, extra string) {
		fmt.Fprintf(&sb, "    %s:\n      command: %s\n      hook: %s\n      phases: [%s]\n      mode: %s\n      timeout_ms: %d\n%s%s",
			name, b.hook, typ, phases, mode, timeoutMs, sandbox, extra)
	}
	hook("guard", "provider", "before_call, after_call", "filter", 30000, "")
	hook("hasty", "provider", "before_call", "filter", 1500, "")
	hook("tool_guard", "tool", "before_execution", "filter", 30000, "")
	hook("session_guard", "session", "session_end", "filter", 30000, "")
	hook("audit", "session", "session_start", "observe", 30000, "      env: [VERDICT_LOG="+b.logEnv+"]\n")
	return sb.String()
}

// built are the hooks PromptKit built from a RuntimeConfig, by name.
type built struct {
	provider map[string]hooks.ProviderHook
	tool     map[string]hooks.ToolHook
	session  map[string]hooks.SessionHook
}

// loadThroughPromptKit is what PromptKit's SDK and Arena do with a
// RuntimeConfig: LoadRuntimeConfig, ResolveSandboxes (PromptKit's
// process-wide registry), BuildExecHooks.
func loadThroughPromptKit(t testing.TB, path string) built {
	t.Helper()
	rc, err := pkconfig.LoadRuntimeConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	sandboxes, err := hooks.ResolveSandboxes(rc.Spec.Sandboxes)
	if err != nil {
		t.Fatal(err)
	}
	provider, tool, session, err := hooks.BuildExecHooks(rc.Spec.Hooks, sandboxes)
	if err != nil {
		t.Fatal(err)
	}
	b := built{provider: map[string]hooks.ProviderHook{}, tool: map[string]hooks.ToolHook{}, session: map[string]hooks.SessionHook{}}
	for _, h := range provider {
		b.provider[h.Name()] = h
	}
	for _, h := range tool {
		b.tool[h.Name()] = h
	}
	for _, h := range session {
		b.session[h.Name()] = h
	}
	return b
}

func providerRequest(content string) *hooks.ProviderRequest {
	return &hooks.ProviderRequest{
		ProviderID: "openai", Model: "gpt-4o", Round: 1,
		Messages: []types.Message{{Role: "user", Content: content}},
	}
}

// outcome is one case's result, in words comparable across sandboxes.
type outcome struct {
	text    string
	elapsed time.Duration
}

// pipelineCases are the cases of the suite, each run through PromptKit's
// hooks as built from pipelineConfig.
var pipelineCases = []struct {
	name string
	run  func(ctx context.Context, b built) string
}{
	{"allow", func(ctx context.Context, b built) string {
		return decision(b.provider["guard"].BeforeCall(ctx, providerRequest("hello")))
	}},
	{"deny with reason", func(ctx context.Context, b built) string {
		return decision(b.provider["guard"].BeforeCall(ctx, providerRequest("please deny-me")))
	}},
	{"deny with metadata", func(ctx context.Context, b built) string {
		return decision(b.provider["guard"].BeforeCall(ctx, providerRequest("meta-me")))
	}},
	{"after_call allow", func(ctx context.Context, b built) string {
		return decision(b.provider["guard"].AfterCall(ctx, providerRequest("hello"), &hooks.ProviderResponse{}))
	}},
	{"non-zero exit", func(ctx context.Context, b built) string {
		return decision(b.provider["guard"].BeforeCall(ctx, providerRequest("fail-me")))
	}},
	{"invalid verdict", func(ctx context.Context, b built) string {
		return decision(b.provider["guard"].BeforeCall(ctx, providerRequest("garbage-me")))
	}},
	{"timeout", func(ctx context.Context, b built) string {
		return decision(b.provider["hasty"].BeforeCall(ctx, providerRequest("sleep-me")))
	}},
	{"tool deny", func(ctx context.Context, b built) string {
		return decision(b.tool["tool_guard"].BeforeExecution(ctx, hooks.ToolRequest{Name: "search", Args: json.RawMessage(`{"q":"deny-me"}`), CallID: "c1"}))
	}},
	{"session filter deny", func(ctx context.Context, b built) string {
		return sessionResult(b.session["session_guard"].OnSessionEnd(ctx, hooks.SessionEvent{SessionID: "s1", Metadata: map[string]any{"x": "deny-me"}}))
	}},
	{"session filter exit", func(ctx context.Context, b built) string {
		return sessionResult(b.session["session_guard"].OnSessionEnd(ctx, hooks.SessionEvent{SessionID: "s1", Metadata: map[string]any{"x": "fail-me"}}))
	}},
	{"observe", func(ctx context.Context, b built) string {
		return sessionResult(b.session["audit"].OnSessionStart(ctx, hooks.SessionEvent{SessionID: "s1"}))
	}},
}

// failed matches a deny PromptKit writes for a hook that did not
// produce a verdict; the middle is the sandbox's own words for why.
var failed = regexp.MustCompile(`^exec hook "(\w+)" failed: .*?( \(stderr: .*\))?$`)

// decision words a Decision. The sandbox's wording of a failure (an
// exit status, a timeout) is replaced with "…": PromptKit's direct
// sandbox says "exit status 3", ours "command ... exited with status 3".
func decision(d hooks.Decision) string {
	if d.Allow {
		return "allow"
	}
	reason := failed.ReplaceAllString(d.Reason, `exec hook "$1" failed: …$2`)
	reason = strings.ReplaceAll(reason, "\n", " ")
	s := "deny: " + reason
	if len(d.Metadata) > 0 {
		m, _ := json.Marshal(d.Metadata)
		s += " " + string(m)
	}
	if d.Enforced {
		s += " (enforced)"
	}
	return s
}

var sessionFailed = regexp.MustCompile(`^exec session hook "(\w+)" failed: .*`)

func sessionResult(err error) string {
	if err == nil {
		return "ok"
	}
	return "error: " + sessionFailed.ReplaceAllString(err.Error(), `exec session hook "$1" failed: …`)
}

// runPipeline runs every case through b, returning the outcomes by case.
func runPipeline(t *testing.T, dir string, b backend) map[string]outcome {
	t.Helper()
	cfg := writeFile(t, filepath.Join(dir, "runtime-"+b.label()+".yaml"), pipelineConfig(b))
	hooksBuilt := loadThroughPromptKit(t, cfg)
	out := map[string]outcome{}
	for _, c := range pipelineCases {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		start := time.Now()
		text := c.run(ctx, hooksBuilt)
		cancel()
		out[c.name] = outcome{text: text, elapsed: time.Since(start)}
	}
	log, err := os.ReadFile(b.logHost)
	if err != nil {
		t.Errorf("%s: observe hook left no log: %v", b.label(), err)
	} else if got := strings.TrimSpace(string(log)); got != "session session_start" {
		t.Errorf("%s: observe hook log = %q, want %q", b.label(), got, "session session_start")
	}
	return out
}

func (b backend) label() string {
	if b.name == "" {
		return "promptkit-direct"
	}
	return b.name
}

// want is what every sandbox must decide, PromptKit's own direct
// included: the verdicts exactly, the failures up to the sandbox's words.
var want = map[string]string{
	"allow":               "allow",
	"deny with reason":    "deny: request contains deny-me",
	"deny with metadata":  `deny: request contains meta-me {"rule":"meta","score":0.5}`,
	"after_call allow":    "allow",
	"non-zero exit":       `deny: exec hook "guard" failed: … (stderr: verdict: failing on purpose)`,
	"invalid verdict":     `deny: exec hook "guard": invalid response JSON: invalid character 'h' in literal true (expecting 'r')`,
	"timeout":             `deny: exec hook "hasty" failed: …`,
	"tool deny":           "deny: request contains deny-me",
	"session filter deny": "ok", // PromptKit reads no verdict from a session hook
	"session filter exit": `error: exec session hook "session_guard" failed: …`,
	"observe":             "ok",
}

// TestPromptKitPipeline drives PromptKit's own code — LoadRuntimeConfig,
// ResolveSandboxes, BuildExecHooks, then the provider, tool and session
// hooks — through the adapter's direct, docker_run (warm pool),
// docker_exec and kubectl_exec sandboxes, and through PromptKit's own
// direct sandbox side by side, and checks every decision.
func TestPromptKitPipeline(t *testing.T) {
	base, bs, a := registeredBackends(t)
	pk := bs[0]
	pk.name, pk.logEnv, pk.logHost = "", pk.logEnv+".pk", pk.logHost+".pk"
	all := append([]backend{pk}, bs...)

	results := map[string]map[string]outcome{}
	for _, b := range all {
		results[b.label()] = runPipeline(t, base, b)
	}
	table := "| case | " + labels(all) + " |\n|---|" + strings.Repeat("---|", len(all)) + "\n"
	for _, c := range pipelineCases {
		row := "| " + c.name + " |"
		for _, b := range all {
			o := results[b.label()][c.name]
			row += fmt.Sprintf(" %s (%s) |", o.text, o.elapsed.Round(time.Millisecond))
			if o.text != want[c.name] {
				t.Errorf("%s, %s:\n got %s\nwant %s", b.label(), c.name, o.text, want[c.name])
			}
			if c.name == "timeout" && o.elapsed > 5*time.Second {
				t.Errorf("%s: a 1.5 s timeout took %s", b.label(), o.elapsed)
			}
		}
		table += row + "\n"
	}
	t.Logf("decisions through PromptKit's hooks:\n%s", table)
	if s := a.Stats(); s.Opened != 4 || s.Sandboxes != 4 {
		t.Errorf("stats = %+v; want the 4 sandboxes opened once each", s)
	}
}

func labels(bs []backend) string {
	var l []string
	for _, b := range bs {
		l = append(l, b.label())
	}
	return strings.Join(l, " | ")
}
