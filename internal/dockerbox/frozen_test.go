package dockerbox

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// freezer is a unix socket in front of the engine's that the test can
// freeze: while frozen, no byte passes either way, as with an engine
// that stops answering.
type freezer struct {
	ln     net.Listener
	mu     sync.Mutex
	frozen bool
	thawed *sync.Cond
}

func newFreezer(t *testing.T, engine string) (sock string, f *freezer) {
	t.Helper()
	sock = filepath.Join(t.TempDir(), "engine.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f = &freezer{ln: ln}
	f.thawed = sync.NewCond(&f.mu)
	t.Cleanup(func() { f.set(false); _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e, err := net.Dial("unix", engine)
			if err != nil {
				_ = c.Close()
				continue
			}
			// Each direction ends on its own (a half-close passes on as
			// one, as the CLI's end of stdin must); both ended, the pair
			// is closed.
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); f.pipe(c, e) }()
			go func() { defer wg.Done(); f.pipe(e, c) }()
			go func() { wg.Wait(); _ = c.Close(); _ = e.Close() }()
		}
	}()
	return sock, f
}

func (f *freezer) set(frozen bool) {
	f.mu.Lock()
	f.frozen = frozen
	f.mu.Unlock()
	f.thawed.Broadcast()
}

func (f *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		f.mu.Lock()
		for f.frozen {
			f.thawed.Wait()
		}
		f.mu.Unlock()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				_ = dst.Close()
				_ = src.Close()
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_ = dst.Close()
				return
			}
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			return
		}
	}
}

// TestFrozenEngineDoesNotHoldTheCall: when the engine stops answering in
// the middle of a call, the call still ends at its timeout plus
// stopBudget, as a timeout; its container goes once the engine answers
// again.
func TestFrozenEngineDoesNotHoldTheCall(t *testing.T) {
	requireDocker(t)
	f := freezeEngine(t)
	name := uniqueName(t)
	sb := openRun(t, name, map[string]any{"transport": "api"})
	f.spawnFrozen(t, sb, "30")
	assertNoContainersSoon(t, name)
}

// freezeEngine puts a freezer in front of the engine for the rest of the
// test.
func freezeEngine(t *testing.T) *freezer {
	t.Helper()
	engine := "/var/run/docker.sock"
	if h, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok {
		engine = h
	}
	sock, f := newFreezer(t, engine)
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	return f
}

// spawnFrozen runs sleep arg with a 2 s timeout, freezing the engine
// halfway, and checks the call ends as a timeout within stopBudget (and
// half a second of slack) of it.
func (f *freezer) spawnFrozen(t *testing.T, sb sandbox.Sandbox, arg string) {
	t.Helper()
	const timeout = 2 * time.Second
	time.AfterFunc(timeout/2, func() { f.set(true) })
	start := time.Now()
	_, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "sleep", Args: []string{arg}, Timeout: timeout})
	took := time.Since(start)
	f.set(false)
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Errorf("err = %v, want a timeout", err)
	}
	if took > timeout+stopBudget+500*time.Millisecond {
		t.Errorf("returned after %v, want within %v of its %v timeout", took, stopBudget+500*time.Millisecond, timeout)
	}
}

// TestFrozenEngineDoesNotHoldAnExec: the same for docker_exec through the
// resident (the default): the call ends at its timeout plus stopBudget,
// and its processes in the container are gone once the engine answers
// again (the resident's own backstop). Without the resident the kill is
// an exec of its own, which the call waits for, up to cleanupTimeout:
// that holds it as long as the engine is frozen (issue 15 note).
func TestFrozenEngineDoesNotHoldAnExec(t *testing.T) {
	requireDocker(t)
	container := startContainer(t)
	f := freezeEngine(t)
	sb := openExec(t, container, map[string]any{"transport": "api", "resident": true})
	marker := sandboxtest.NewMarker()
	f.spawnFrozen(t, sb, marker)
	sandboxtest.AssertNoProcs(t, marker, 30*time.Second)
}
