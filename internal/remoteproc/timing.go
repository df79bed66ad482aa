package remoteproc

import (
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The engine's timing, one set for every backend and transport.
const (
	// OrphanGrace is how long the streams may stay open after the
	// command has exited: longer means processes it left behind hold
	// them, and they are killed, as the direct backend kills what is
	// left of a process group. A loaded runtime can take a while to
	// close an exec's streams, and the kill is an exec of its own (tens
	// of milliseconds), so it is not hasty; a call that leaves nothing
	// behind never waits for it.
	OrphanGrace = 500 * time.Millisecond
	// StreamGrace bounds the wait for an exec stream to end once its
	// context is done and the remote processes are killed; past it the
	// transport is broken and the call fails as such.
	StreamGrace = 5 * time.Second
	// SessionStart bounds how long a fresh exec session may take to
	// report its wrapper's PID: past it the session is cut and the call,
	// which never reached it, goes to a session of its own once more. A
	// real cluster's kubectl exec was seen to hang before its stream
	// opened, now and then, with many at once on two cores; the call
	// would otherwise wait out its whole timeout and fail.
	SessionStart = 15 * time.Second
	// CancelDrain is how long, once a cancelled call's processes are
	// killed, its stream may take to end by itself and bring what the
	// command wrote before the cancel (cutting it at once loses output
	// still on its way through the client). A quarter of the grace every
	// layer above allows past the deadline, so it fits with the kill.
	CancelDrain = sandbox.Grace / 4
	// CleanupTimeout bounds the kill exec after a timeout, and the
	// diagnosis of a failed exec: both run on a context of their own
	// once the call's is done.
	CleanupTimeout = 10 * time.Second
	// StopBudget bounds, past a call's deadline, the diagnosis of a
	// failed exec: three quarters of sandbox.Grace, leaving the rest for
	// the report to reach the host. (The kill exec is not bounded by it:
	// see killTree.)
	StopBudget = sandbox.Grace * 3 / 4
	// ResidentBackstop is added to a call's timeout for the resident's
	// own deadline: the plugin's comes first and kills the call; the
	// resident's only matters when the plugin is gone.
	ResidentBackstop = 5 * time.Second
)

// CheckAttempt bounds one try of Check's exec, which runs a builtin and
// a test: one that takes longer is stuck, and is tried again.
const CheckAttempt = 10 * time.Second

// sessionStart and checkAttempt are SessionStart and CheckAttempt,
// shortened by tests.
var (
	sessionStart = SessionStart
	checkAttempt = CheckAttempt
)
