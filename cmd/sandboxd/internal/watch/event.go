package watch

import "time"

// Kind is what an Event reports.
type Kind string

// The kinds of event.
const (
	// KindMatch is a line that matched an error pattern.
	KindMatch Kind = "match"
	// KindIdle is a silence of Options.Idle.
	KindIdle Kind = "idle"
	// KindExit is the process's end; it is always the last event.
	KindExit Kind = "exit"
)

// Event is one thing a Watcher saw. Fields not relevant to its Kind are
// left zero.
type Event struct {
	ID   int64     `json:"id"`
	Kind Kind      `json:"kind"`
	Time time.Time `json:"time"`

	// Match: the stream, the line's number in it (from 1), the line
	// (scrubbed, at most Options.MaxLine bytes), whether it was cut,
	// and the pattern it matched.
	Stream     string `json:"stream,omitempty"`
	LineNumber int    `json:"line_number,omitempty"`
	Line       string `json:"line,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	Pattern    string `json:"pattern,omitempty"`

	// Idle: how long the process had printed nothing, in milliseconds.
	SilentMS int64 `json:"silent_ms,omitempty"`

	// Exit: the exit code (-1 when it has none: killed by a signal or
	// never started) and how the process ended, in words.
	ExitCode *int   `json:"exit_code,omitempty"`
	Status   string `json:"status,omitempty"`
}

// Page is what Events returns: the events after the ID asked for, as
// many as fit in one answer.
type Page struct {
	Events []Event `json:"events"`
	// Dropped counts events after the ID asked for that the ring no
	// longer holds.
	Dropped int64 `json:"dropped"`
	// More says further events are held: ask again after the last ID.
	More bool `json:"more"`
	// LastEventID is the newest event's ID (0: none yet), the
	// since_event_id that returns only what happens next.
	LastEventID int64 `json:"last_event_id"`
	// Exited says the exit event has been recorded: no more will come.
	Exited bool `json:"exited"`
}
