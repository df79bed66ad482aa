package promptkit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/AltairaLabs/PromptKit/runtime/providers"
	"github.com/AltairaLabs/PromptKit/runtime/providers/mock"
	"github.com/AltairaLabs/PromptKit/runtime/types"
)

// step is one answer of the scripted model, given the text of the tool
// results it has just received (empty before the first tool call).
type step func(results []toolResult) *mock.Turn

// toolResult is one tool result the model received, as PromptKit gave it.
type toolResult struct {
	Name, Text, Error string
}

// scriptedModel is PromptKit's own mock provider (runtime/providers/mock)
// answering from a script, one step per model call, and recording every
// tool result the model was given: what a real model would have seen.
type scriptedModel struct {
	*mock.ToolProvider
	repo *script
}

func newScriptedModel(steps ...step) *scriptedModel {
	r := &script{steps: steps}
	return &scriptedModel{ToolProvider: mock.NewToolProviderWithRepository("scripted", "scripted-model", false, r), repo: r}
}

// PredictWithTools records what the model receives, then answers.
func (m *scriptedModel) PredictWithTools(ctx context.Context, req providers.PredictionRequest, tools providers.ProviderTools, choice string) (providers.PredictionResponse, []types.MessageToolCall, error) {
	m.repo.see(req.Messages)
	return m.ToolProvider.PredictWithTools(ctx, req, tools, choice)
}

// PredictStreamWithTools records too: the embedded provider's streaming
// path calls its own PredictWithTools, not the override above.
func (m *scriptedModel) PredictStreamWithTools(ctx context.Context, req providers.PredictionRequest, tools any, choice string) (<-chan providers.StreamChunk, error) {
	m.repo.see(req.Messages)
	return m.ToolProvider.PredictStreamWithTools(ctx, req, tools, choice)
}

// Results returns every tool result the model received, in order.
func (m *scriptedModel) Results() []toolResult {
	m.repo.mu.Lock()
	defer m.repo.mu.Unlock()
	return append([]toolResult(nil), m.repo.all...)
}

// script is the mock's ResponseRepository: each GetTurn is the next step.
type script struct {
	mu    sync.Mutex
	steps []step
	next  int
	seen  int          // messages already looked at
	fresh []toolResult // results since the last step
	all   []toolResult
}

func (s *script) see(msgs []types.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(msgs) < s.seen {
		s.seen = 0 // a new conversation
	}
	for _, m := range msgs[s.seen:] {
		if m.Role == "tool" && m.ToolResult != nil {
			r := toolResult{Name: m.ToolResult.Name, Text: m.ToolResult.GetTextContent(), Error: m.ToolResult.Error}
			s.fresh = append(s.fresh, r)
			s.all = append(s.all, r)
		}
	}
	s.seen = len(msgs)
}

func (s *script) GetTurn(context.Context, mock.ResponseParams) (*mock.Turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.steps) {
		return &mock.Turn{Type: "text", Content: "script finished"}, nil
	}
	st := s.steps[s.next]
	s.next++
	fresh := s.fresh
	s.fresh = nil
	return st(fresh), nil
}

func (s *script) GetResponse(ctx context.Context, p mock.ResponseParams) (string, error) {
	t, err := s.GetTurn(ctx, p)
	if err != nil {
		return "", err
	}
	return t.Content, nil
}

// call is a step calling tools of the codegen server, regardless of what
// came back.
func call(calls ...mock.ToolCall) step {
	return func([]toolResult) *mock.Turn { return &mock.Turn{Type: "tool_calls", ToolCalls: calls} }
}

// tool names a codegen tool as PromptKit offers it.
func tool(name string, args map[string]any) mock.ToolCall {
	return mock.ToolCall{Name: "mcp__codegen__" + name, Arguments: args}
}

func say(text string) step {
	return func([]toolResult) *mock.Turn { return &mock.Turn{Type: "text", Content: text} }
}

// resultOf finds the last result of tool name, or fails.
func resultOf(rs []toolResult, name string) (toolResult, error) {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Name == "mcp__codegen__"+name || rs[i].Name == name {
			return rs[i], nil
		}
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Name)
	}
	return toolResult{}, fmt.Errorf("no result of %s among %s", name, strings.Join(got, ", "))
}
