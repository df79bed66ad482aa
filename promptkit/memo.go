package promptkit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// entry is one open sandbox and the PromptKit handles that share it.
type entry struct {
	key    string
	direct bool // runs on this host: relative commands resolve against BaseDir

	ready chan struct{} // closed when the open finished, either way
	sb    sandbox.Sandbox
	err   error

	refs int // handles not closed, guarded by Adapter.mu

	closeOnce sync.Once
	closeErr  error
}

// close releases the sandbox, once, after its open has finished.
func (e *entry) close() error {
	<-e.ready
	e.closeOnce.Do(func() {
		e.closeErr = sandbox.Close(e.sb)
	})
	return e.closeErr
}

// entryKey identifies a sandbox across loads: its name, its mode, and
// its configuration as resolved (after ${NAME} and relative paths), so
// that an entry whose environment changed gets a sandbox of its own.
// encoding/json writes map keys sorted, which makes the key canonical.
func entryKey(s config.Sandbox) (string, error) {
	b, err := json.Marshal(struct {
		Name, Mode, Version, Plugin string
		OpenTimeout                 int64
		Config                      map[string]any
	}{s.Name, s.Mode, s.Version, s.Plugin, int64(s.OpenTimeout), s.Config})
	if err != nil {
		return "", fmt.Errorf("sandbox %q: configuration: %w", s.Name, err)
	}
	return string(b), nil
}

// acquire returns the open sandbox an entry declares, opening it on the
// first request and sharing it afterwards. Concurrent first requests
// wait for one open; a failed open is forgotten, so the next load tries
// again.
func (a *Adapter) acquire(name, mode string, cfg map[string]any) (*entry, error) {
	s, err := config.SandboxFromEntry(name, mode, cfg, config.EntryOptions{Dir: a.baseDir, LookupEnv: a.opts.LookupEnv})
	if err != nil {
		return nil, err
	}
	key, err := entryKey(s)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, ErrClosed
	}
	e, found := a.entries[key]
	if !found {
		e = &entry{key: key, direct: mode == direct.ModeName, ready: make(chan struct{})}
		a.entries[key] = e
	}
	e.refs++
	a.mu.Unlock()

	if found {
		<-e.ready
	} else {
		e.sb, e.err = a.openSandbox(s)
		close(e.ready)
	}
	if e.err != nil {
		a.release(e)
		return nil, e.err
	}
	if found {
		a.stats.reused.Add(1)
	} else {
		a.stats.opened.Add(1)
	}
	return e, nil
}

func (a *Adapter) openSandbox(s config.Sandbox) (sandbox.Sandbox, error) {
	if s.Mode == direct.ModeName {
		return direct.Factory(context.Background(), s.Name, s.Config)
	}
	return a.host.Open(s)
}

// release drops one handle's reference. The last one closes the sandbox:
// PromptKit never closes what it loads, so in practice sandboxes live
// until Adapter.Close, but an embedder that does close its handles gets
// their resources back.
func (a *Adapter) release(e *entry) {
	a.mu.Lock()
	e.refs--
	last := e.refs == 0 && !a.closed && a.entries[e.key] == e
	if last {
		delete(a.entries, e.key)
	}
	a.mu.Unlock()
	if last {
		if err := e.close(); err != nil {
			a.log.Warn("close sandbox", "error", err)
		}
	}
}
