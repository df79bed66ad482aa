package wire

// EvalResult is what an eval hook reads on stdin. Unlike the other hook
// types it is not wrapped in an envelope: PromptKit writes the result itself.
type EvalResult struct {
	EvalID      string          `json:"eval_id"`
	Type        string          `json:"type"`
	Kind        string          `json:"kind,omitempty"`
	Passed      *bool           `json:"passed,omitempty"`
	Score       *float64        `json:"score,omitempty"`
	Value       any             `json:"value,omitempty"`
	MetricValue *float64        `json:"metric_value,omitempty"`
	Explanation string          `json:"explanation,omitempty"`
	DurationMs  int64           `json:"duration_ms"`
	Error       string          `json:"error,omitempty"`
	Message     string          `json:"message,omitempty"`
	Details     map[string]any  `json:"details,omitempty"`
	Violations  []EvalViolation `json:"violations,omitempty"`
	Skipped     bool            `json:"skipped,omitempty"`
	SkipReason  string          `json:"skip_reason,omitempty"`
	SessionID   string          `json:"session_id,omitempty"`
	TurnIndex   int             `json:"turn_index,omitempty"`
}

// EvalViolation is one turn at which an eval found a problem.
type EvalViolation struct {
	TurnIndex   int            `json:"turn_index"`
	Description string         `json:"description"`
	Evidence    map[string]any `json:"evidence,omitempty"`
}
