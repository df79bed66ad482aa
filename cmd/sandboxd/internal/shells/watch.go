package shells

import (
	"fmt"
	"regexp"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/watch"
)

// Watch is a watch_process call: a background shell whose output is
// matched against error patterns as it arrives.
type Watch struct {
	// Command runs as a background shell (Background and Timeout are
	// ignored): BashOutput reads it and KillShell stops it like any other.
	Command Command
	// Patterns mark error lines (see watch.Compile).
	Patterns []*regexp.Regexp
	// Idle is the silence that makes an idle event; 0 means none.
	Idle time.Duration
}

// Watch starts w.Command as a watched background shell and returns its
// ID in a sentence. It is checked and counted like any background shell,
// and at most Options.MaxWatched run at once.
func (m *Manager) Watch(w Watch) (string, error) {
	if err := check(w.Command); err != nil {
		return "", err
	}
	if w.Idle < 0 {
		return "", fmt.Errorf("watch process: idle timeout must not be negative (got %s)", w.Idle)
	}
	return m.startBackground(w.Command, watch.New(watch.Options{Patterns: w.Patterns, Idle: w.Idle}))
}

// Events returns the events of owner's watched process id after the
// event ID since, with the shell's status ("running" or how it ended).
// A watched process forgotten by BashOutput still answers, as long as
// its tombstone keeps its events.
func (m *Manager) Events(owner, id string, since int64) (watch.Page, string, error) {
	sh, t, err := m.lookup(owner, id)
	if err != nil {
		return watch.Page{}, "", fmt.Errorf("watch events: %w", err)
	}
	if t != nil {
		if t.watcher == nil {
			return watch.Page{}, "", fmt.Errorf("watch events: shell %s has no events kept (status: %s); only watched processes have events, and only the newest %d finished ones keep them", id, t.status, maxWatchedTombs)
		}
		return t.watcher.Events(since), t.status, nil
	}
	if sh.watcher == nil {
		return watch.Page{}, "", fmt.Errorf("watch events: shell %s is not a watched process (start one with watch_process); read its output with BashOutput", id)
	}
	sh.mu.Lock()
	status := sh.status
	sh.mu.Unlock()
	if status == "" {
		status = "running"
	}
	return sh.watcher.Events(since), status, nil
}
