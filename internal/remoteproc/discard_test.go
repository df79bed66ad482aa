package remoteproc

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// stdinKeptOpen is a local target whose runtime never passes the
// client's end of file on: a wrapper's stdin stays open after the
// client closed its side, and after its stream was cut. It records the
// PIDs the wrappers report.
type stdinKeptOpen struct {
	localTarget
	mu   sync.Mutex
	held []*io.PipeWriter
	pids []int
}

func (s *stdinKeptOpen) Exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if stdin == nil {
		return s.localTarget.Exec(ctx, argv, stdin, stdout, stderr)
	}
	r, w := io.Pipe()
	s.mu.Lock()
	s.held = append(s.held, w)
	s.mu.Unlock()
	go func() { _, _ = io.Copy(w, stdin) }() // the client's end of file stops here
	return s.localTarget.Exec(ctx, argv, r, stdout, &pidTee{s: s, w: stderr})
}

func (s *stdinKeptOpen) wrappers() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.pids...)
}

// release lets go of the stdins held open, so nothing of the test lasts.
func (s *stdinKeptOpen) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.held {
		_ = w.Close()
	}
}

// pidTee notes the PID line a wrapper writes first, whole, to stderr.
type pidTee struct {
	s *stdinKeptOpen
	w io.Writer
}

func (p *pidTee) Write(b []byte) (int, error) {
	if rest, ok := bytes.CutPrefix(b, []byte(Prefix)); ok {
		if pid, err := strconv.Atoi(string(bytes.TrimSpace(rest))); err == nil {
			p.s.mu.Lock()
			p.s.pids = append(p.s.pids, pid)
			p.s.mu.Unlock()
		}
	}
	return p.w.Write(b)
}

// TestCloseKillsAWarmWrapperItHadToCut: a warm session whose wrapper
// does not end when its stdin is closed (its runtime kept it open) is cut
// when the engine closes, and the wrapper it ran is killed by its PID,
// not left waiting in the target.
func TestCloseKillsAWarmWrapperItHadToCut(t *testing.T) {
	t.Parallel()
	tg := &stdinKeptOpen{}
	t.Cleanup(tg.release)
	e := New(tg, Options{Mode: "test", Warm: 1})
	awaitWarm(t, e)
	e.Close()
	pids := tg.wrappers()
	if len(pids) != 1 {
		t.Fatalf("wrappers %v, want the one warm session's", pids)
	}
	proctest.Gone(t, "the wrapper of a warm session cut at close", pids[0])
}
