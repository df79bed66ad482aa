package files

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// Ledger records what one MCP session has read, per workspace, so Write
// and Edit refuse to overwrite a file the agent has not seen or that
// changed since. Each session has its own: one session's Read does not
// let another write. Safe for concurrent use. The zero Ledger is empty and
// ready; a nil *Ledger remembers nothing, so Write and Edit refuse every
// existing file.
type Ledger struct {
	mu    sync.Mutex
	files map[ledgerKey]state
}

// ledgerKey keys by workspace too, so a session using two workspaces
// cannot carry a read of a/x over to b/x.
type ledgerKey struct {
	workspace string
	rel       string
}

// state is a file as the session last saw it.
type state struct {
	size  int64
	mtime time.Time
	sum   [sha256.Size]byte
}

// NewLedger returns an empty ledger, for a new session.
func NewLedger() *Ledger {
	return &Ledger{files: make(map[ledgerKey]state)}
}

func (l *Ledger) get(ws *workspace.Workspace, rel string) (state, bool) {
	if l == nil {
		return state{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.files[ledgerKey{ws.Dir(), rel}]
	return st, ok
}

func (l *Ledger) put(ws *workspace.Workspace, rel string, st state) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.files == nil {
		l.files = make(map[ledgerKey]state)
	}
	l.files[ledgerKey{ws.Dir(), rel}] = st
}
