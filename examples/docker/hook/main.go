// Command pii-hook is the Docker example's exec hook: a PromptKit provider
// filter that denies any LLM call whose request or response carries a US
// Social Security number. It is the Go twin of examples/hooks/pii_filter.py,
// built static (CGO_ENABLED=0) so it runs in an image FROM scratch.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
)

// ssn finds NNN-NN-NNNN; valid reports the ones the SSA could issue (RE2
// has no lookahead for the exclusions).
var ssn = regexp.MustCompile(`\b(\d{3})-(\d{2})-(\d{4})\b`)

func valid(m []string) bool {
	area, group, serial := m[1], m[2], m[3]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type message struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	Parts      []part `json:"parts"`
	ToolResult *struct {
		Parts []part `json:"parts"`
	} `json:"tool_result"`
}

type envelope struct {
	Phase   string `json:"phase"`
	Request *struct {
		SystemPrompt string    `json:"SystemPrompt"`
		Messages     []message `json:"Messages"`
	} `json:"request"`
	Response *struct {
		Message *message `json:"Message"`
	} `json:"response"`
}

// texts calls f with every text of m.
func texts(m *message, where string, f func(where, text string)) {
	if m == nil {
		return
	}
	f(where, m.Content)
	for _, p := range m.Parts {
		if p.Type == "text" {
			f(where, p.Text)
		}
	}
	if m.ToolResult != nil {
		for _, p := range m.ToolResult.Parts {
			if p.Type == "text" {
				f(where, p.Text)
			}
		}
	}
}

type verdict struct {
	Allow    bool              `json:"allow"`
	Reason   string            `json:"reason,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

func main() {
	var env envelope
	if err := json.NewDecoder(os.Stdin).Decode(&env); err != nil {
		fmt.Fprintln(os.Stderr, "pii-hook: stdin is not a hook request:", err)
		os.Exit(2)
	}
	found := ""
	check := func(where, text string) {
		if found != "" {
			return
		}
		for _, m := range ssn.FindAllStringSubmatch(text, -1) {
			if valid(m) {
				found = where
				return
			}
		}
	}
	if r := env.Request; r != nil {
		check("system prompt", r.SystemPrompt)
		for i := range r.Messages {
			texts(&r.Messages[i], fmt.Sprintf("message %d (%s)", i, r.Messages[i].Role), check)
		}
	}
	if env.Response != nil {
		texts(env.Response.Message, "response", check)
	}
	v := verdict{Allow: true}
	if found != "" {
		v = verdict{Reason: "US SSN found in " + found, Metadata: map[string]string{"detector": "ssn"}}
		if env.Phase != "" {
			v.Metadata["phase"] = env.Phase
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		os.Exit(2)
	}
}
