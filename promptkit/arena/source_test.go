package arena_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/AltairaLabs/promptarena/arena/mcpsource"

	"github.com/altairalabs/promptkit-sandbox/promptkit"
	"github.com/altairalabs/promptkit-sandbox/promptkit/arena"
	"github.com/altairalabs/promptkit-sandbox/promptkit/arena/register"
)

var validArgs = map[string]any{"config": "runtime.yaml", "sandbox": "code"}

// TestCloserReleasesExactlyOnce: the closer Open returns releases the
// sandbox once however often, and from however many goroutines, it is
// closed, and each Close returns that release's error.
func TestCloserReleasesExactlyOnce(t *testing.T) {
	var releases atomic.Int32
	boom := errors.New("boom")
	s := arena.NewWithProvision(func(context.Context, arena.Args) (mcpsource.MCPConn, func() error, error) {
		return mcpsource.MCPConn{URL: "http://127.0.0.1:1"}, func() error { releases.Add(1); return boom }, nil
	})
	_, closer, err := s.Open(context.Background(), validArgs)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := closer.Close(); !errors.Is(err, boom) {
				t.Errorf("Close = %v, want the release's error", err)
			}
		})
	}
	wg.Wait()
	if err := closer.Close(); !errors.Is(err, boom) {
		t.Errorf("Close after the others = %v, want the release's error", err)
	}
	if n := releases.Load(); n != 1 {
		t.Errorf("released %d times, want 1", n)
	}
}

// TestOpenHandsOverWhatWasProvisioned: the endpoint, headers and
// instance come back as provisioned, with the checked arguments going
// in; a failed provision returns its error and no closer; bad arguments
// provision nothing.
func TestOpenHandsOverWhatWasProvisioned(t *testing.T) {
	want := mcpsource.MCPConn{URL: "http://127.0.0.1:4242", Headers: map[string]string{"Authorization": "Bearer t"}, ContainerID: "c1"}
	var got []arena.Args
	fail := errors.New("no engine")
	s := arena.NewWithProvision(func(_ context.Context, a arena.Args) (mcpsource.MCPConn, func() error, error) {
		got = append(got, a)
		if a.Sandbox == "broken" {
			return mcpsource.MCPConn{}, nil, fail
		}
		return want, func() error { return nil }, nil
	})
	conn, closer, err := s.Open(context.Background(), validArgs)
	if err != nil || closer == nil {
		t.Fatalf("Open = %v, %v", closer, err)
	}
	if conn.URL != want.URL || conn.Headers["Authorization"] != "Bearer t" || conn.ContainerID != "c1" {
		t.Errorf("conn = %+v, want %+v", conn, want)
	}
	if _, closer, err := s.Open(context.Background(), map[string]any{"config": "runtime.yaml", "sandbox": "broken"}); !errors.Is(err, fail) || closer != nil {
		t.Errorf("failed provision: Open = %v, %v; want its error and no closer", closer, err)
	}
	if _, _, err := s.Open(context.Background(), map[string]any{"sandbox": "code"}); err == nil {
		t.Error("Open without config succeeded")
	}
	if len(got) != 2 || got[0].Sandbox != "code" || got[1].Sandbox != "broken" {
		t.Errorf("provisioned %+v; want code, then broken, and nothing for the bad arguments", got)
	}
}

// TestOpenAfterClose: a closed source provisions nothing, and closing it
// again is a no-op.
func TestOpenAfterClose(t *testing.T) {
	s := arena.New(promptkit.Options{PluginDirs: []string{t.TempDir()}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Open(context.Background(), validArgs); !errors.Is(err, arena.ErrClosed) {
		t.Errorf("Open after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestRegistered: importing the register package registers its Source
// under arena.Name, where arena's engine looks a config's source up.
func TestRegistered(t *testing.T) {
	src, ok := mcpsource.LookupMCPSource(arena.Name)
	if !ok || src != register.Source {
		t.Fatalf("LookupMCPSource(%q) = %v, %v; want register.Source", arena.Name, src, ok)
	}
}
