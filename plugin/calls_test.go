package plugin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// countingServer is the real server, counting the streams the host opens.
type countingServer struct {
	*server
	calls, spawns atomic.Int32
	// breakFirst ends the first Calls stream after its first message.
	breakFirst bool
}

func (c *countingServer) Calls(stream sandboxpb.Sandbox_CallsServer) error {
	if c.calls.Add(1) == 1 && c.breakFirst {
		if _, err := stream.Recv(); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "stream broken on purpose")
	}
	return c.server.Calls(stream)
}

func (c *countingServer) Spawn(stream sandboxpb.Sandbox_SpawnServer) error {
	c.spawns.Add(1)
	return c.server.Spawn(stream)
}

func startCounting(t *testing.T, opts ServeOpts, breakFirst bool) (*harness, *countingServer) {
	t.Helper()
	opts.Name, opts.Version, opts.Modes = testPlugin, "1.2.3", testModes()
	srv := newServer(opts, hclog.NewNullLogger())
	t.Cleanup(func() { srv.shutdown(time.Second) })
	cs := &countingServer{server: srv, breakFirst: breakFirst}
	h := startService(t, cs)
	h.srv = srv
	return h, cs
}

func echo(t *testing.T, rs *RemoteSandbox, stdin []byte) {
	t.Helper()
	resp, err := rs.Spawn(context.Background(), sandbox.Request{Command: "cat", Stdin: stdin})
	if err != nil || !bytes.Equal(resp.Stdout, stdin) {
		t.Fatalf("cat of %d bytes: %d bytes back, %v", len(stdin), len(resp.Stdout), err)
	}
}

// Every call whose stdin fits one message goes on one Calls stream; a
// larger stdin has a Spawn stream of its own.
func TestCallsShareOneStream(t *testing.T) {
	checkGoroutines(t)
	h, cs := startCounting(t, ServeOpts{}, false)
	rs := h.open(t, "calls", "direct", nil)
	for range 5 {
		echo(t, rs, []byte("small"))
	}
	echo(t, rs, bytes.Repeat([]byte("x"), ChunkSize))
	if got := cs.calls.Load(); got != 1 {
		t.Errorf("%d Calls streams, want 1", got)
	}
	if got := cs.spawns.Load(); got != 0 {
		t.Errorf("%d Spawn streams for stdin that fits a message, want 0", got)
	}
	echo(t, rs, bytes.Repeat([]byte("y"), ChunkSize+1))
	if got := cs.spawns.Load(); got != 1 {
		t.Errorf("%d Spawn streams after a stdin of ChunkSize+1, want 1", got)
	}
}

// A plugin that serves no Calls stream is asked for Spawn streams.
func TestCallsNotServedUsesSpawn(t *testing.T) {
	checkGoroutines(t)
	h, cs := startCounting(t, ServeOpts{SpawnStreamsOnly: true}, false)
	rs := h.open(t, "legacy", "direct", nil)
	echo(t, rs, []byte("small"))
	echo(t, rs, []byte("again"))
	if c, s := cs.calls.Load(), cs.spawns.Load(); c != 0 || s != 2 {
		t.Errorf("%d Calls and %d Spawn streams, want 0 and 2", c, s)
	}
}

// A Calls stream that breaks fails the call it carried as a lost
// connection; the next call opens a new stream.
func TestCallsStreamBreakThenReopen(t *testing.T) {
	checkGoroutines(t)
	h, cs := startCounting(t, ServeOpts{}, true)
	rs := h.open(t, "reopen", "direct", nil)
	_, err := rs.Spawn(context.Background(), sandbox.Request{Command: "true"})
	if sandbox.KindOf(err) != sandbox.KindTransport || !strings.Contains(err.Error(), "connection lost") ||
		!strings.Contains(err.Error(), "stream broken on purpose") {
		t.Fatalf("call on the broken stream: %v, want a lost connection naming the cause", err)
	}
	echo(t, rs, []byte("after"))
	if got := cs.calls.Load(); got != 2 {
		t.Errorf("%d Calls streams, want 2", got)
	}
}

// A caller that does not take its output (a stalled writer) holds up no
// other call on the shared stream.
func TestCallsSlowWriterHoldsUpNoOtherCall(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "slow", "direct", nil)
	release := make(chan struct{})
	w := &blockingWriter{release: release, started: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		var out bytes.Buffer
		_, err := rs.SpawnStreaming(context.Background(), sandbox.Request{
			Command: "sh", Args: []string{"-c", "head -c 3000000 /dev/zero"},
		}, io.MultiWriter(w, &out), io.Discard)
		if err == nil && out.Len() != sandbox.DefaultOutputLimit && out.Len() != 3000000 {
			err = errors.New("wrong output length")
		}
		done <- err
	}()
	<-w.started
	for range 3 {
		echo(t, rs, []byte("meanwhile"))
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// blockingWriter blocks its first Write until release is closed.
type blockingWriter struct {
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.once.Do(func() {
		close(b.started)
		<-b.release
	})
	return len(p), nil
}

// A call whose context ends mid-call on the shared stream ends as a
// cancelled call, with what the process wrote, and the stream carries
// the next call.
func TestCallsCancelOneCall(t *testing.T) {
	checkGoroutines(t)
	h, cs := startCounting(t, ServeOpts{}, false)
	rs := h.open(t, "cancel", "direct", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	resp, err := rs.Spawn(ctx, sandbox.Request{Command: "sh", Args: []string{"-c", "echo begun; exec sleep 30"}})
	if !errors.Is(err, context.DeadlineExceeded) || sandbox.KindOf(err) != sandbox.KindTimeout {
		t.Fatalf("err %v, want the context's deadline", err)
	}
	if string(resp.Stdout) != "begun\n" {
		t.Errorf("stdout %q, want what the process wrote", resp.Stdout)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cancelled call took %s", took)
	}
	echo(t, rs, []byte("next"))
	if got := cs.calls.Load(); got != 1 {
		t.Errorf("%d Calls streams, want 1", got)
	}
}
