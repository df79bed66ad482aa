package plugin

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A host that breaks the protocol gets a clear status, and the plugin
// keeps serving.
func TestServerRejectsBadInput(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "target", "direct", nil)
	raw := sandboxpb.NewSandboxClient(h.conn)

	start := func(size int64, env ...string) *sandboxpb.SpawnInput {
		return &sandboxpb.SpawnInput{Msg: &sandboxpb.SpawnInput_Start{Start: &sandboxpb.SpawnStart{
			Handle: rs.handle, Command: "true", StdinSize: size, Env: env,
		}}}
	}
	stdin := func(b []byte) *sandboxpb.SpawnInput {
		return &sandboxpb.SpawnInput{Msg: &sandboxpb.SpawnInput_Stdin{Stdin: b}}
	}
	end := &sandboxpb.SpawnInput{Msg: &sandboxpb.SpawnInput_StdinEnd{StdinEnd: &sandboxpb.StdinEnd{}}}
	unknown := &sandboxpb.SpawnInput{Msg: &sandboxpb.SpawnInput_Start{Start: &sandboxpb.SpawnStart{Handle: "nope"}}}

	cases := []struct {
		name string
		msgs []*sandboxpb.SpawnInput
		code codes.Code
		msg  string
	}{
		{"stdin first", []*sandboxpb.SpawnInput{stdin([]byte("x"))}, codes.InvalidArgument, "first spawn message must be start, got stdin"},
		{"empty first", []*sandboxpb.SpawnInput{{}}, codes.InvalidArgument, "first spawn message must be start, got empty message"},
		{"end first", []*sandboxpb.SpawnInput{end}, codes.InvalidArgument, "first spawn message must be start, got stdin_end"},
		{"two starts", []*sandboxpb.SpawnInput{start(0), start(0)}, codes.InvalidArgument, "unexpected start while reading stdin"},
		{"more stdin than announced", []*sandboxpb.SpawnInput{start(3), stdin([]byte("12345"))}, codes.InvalidArgument, "more stdin than the 3 bytes announced"},
		{"less stdin than announced", []*sandboxpb.SpawnInput{start(5), stdin([]byte("123")), end}, codes.InvalidArgument, "stdin_end after 3 bytes of stdin, 5 announced"},
		{"absurd stdin size", []*sandboxpb.SpawnInput{start(1 << 62), end}, codes.InvalidArgument, "stdin_end after 0 bytes of stdin, 4611686018427387904 announced"},
		{"negative stdin size", []*sandboxpb.SpawnInput{start(-1)}, codes.InvalidArgument, "negative stdin_size -1"},
		{"no end", []*sandboxpb.SpawnInput{start(0)}, codes.InvalidArgument, "spawn input ended before stdin_end"},
		{"bare env key", []*sandboxpb.SpawnInput{start(0, "A=1", "HOME"), end}, codes.InvalidArgument, `env entry "HOME" has no value: the host resolves bare keys before sending`},
		{"unknown handle", []*sandboxpb.SpawnInput{unknown}, codes.NotFound, `unknown sandbox handle "nope": closed, or opened in an earlier plugin process`},
		{"oversized chunk", []*sandboxpb.SpawnInput{start(5 << 20), stdin(make([]byte, 5<<20))}, codes.ResourceExhausted, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			stream, err := raw.Spawn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.msgs {
				if err := stream.Send(m); err != nil {
					break // the server gave up; its status follows
				}
			}
			_ = stream.CloseSend()
			_, err = stream.Recv()
			st := status.Convert(err)
			if st.Code() != tc.code || (tc.msg != "" && st.Message() != tc.msg) {
				t.Fatalf("status %v %q, want %v %q", st.Code(), st.Message(), tc.code, tc.msg)
			}
		})
	}

	ctx := context.Background()
	if _, err := raw.Open(ctx, &sandboxpb.OpenRequest{SandboxName: "s", Mode: "direct", ConfigJson: []byte("[1,2]")}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Open with a JSON list: %v", err)
	}
	if _, err := raw.Close(ctx, &sandboxpb.CloseRequest{Handle: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("Close of an unknown handle: %v", err)
	}
	// Still serving, the sandbox included.
	resp, err := rs.Spawn(ctx, sandbox.Request{Command: "echo", Args: []string{"fine"}})
	if err != nil || string(resp.Stdout) != "fine\n" {
		t.Fatalf("after bad input: %q %v", resp.Stdout, err)
	}
}

func TestCloseCallsCloser(t *testing.T) {
	checkGoroutines(t)
	f := &fakeSandbox{name: "pool", spawn: nil}
	addFake(t, f)
	h := startServer(t, nil)
	rs, err := h.client.Open(context.Background(), "pool", "fake", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.closed:
	default:
		t.Fatal("Close did not reach the backend's Closer")
	}
}

// At shutdown the calls in flight wind down first, then every open
// sandbox is closed, and one that hangs does not hold the process beyond
// the grace.
func TestShutdown(t *testing.T) {
	checkGoroutines(t)
	entered := make(chan struct{})
	var cleanedUp atomic.Bool
	slow := &fakeSandbox{name: "slow", spawn: func(ctx context.Context, _ sandbox.Request) (sandbox.Response, error) {
		close(entered)
		<-ctx.Done()
		time.Sleep(100 * time.Millisecond) // removing a container, say
		cleanedUp.Store(true)
		return sandbox.Response{}, sandbox.ContextError(ctx, "slow", 0)
	}}
	a := &fakeSandbox{name: "a"}
	stuck := &fakeSandbox{name: "stuck", release: make(chan struct{})}
	for _, f := range []*fakeSandbox{slow, a, stuck} {
		addFake(t, f)
	}
	h := startServer(t, nil)
	var rs *RemoteSandbox
	for _, name := range []string{"slow", "a", "stuck"} {
		r, err := h.client.Open(context.Background(), name, "fake", nil)
		if err != nil {
			t.Fatal(err)
		}
		if name == "slow" {
			rs = r
		}
	}
	spawned := make(chan error, 1)
	go func() {
		_, err := rs.Spawn(context.Background(), sandbox.Request{Command: "x"})
		spawned <- err
	}()
	<-entered
	h.stopServing() // what go-plugin's shutdown does
	if err := <-spawned; !errors.Is(err, sandbox.ErrTransport) {
		t.Fatalf("call in flight: %v", err)
	}
	start := time.Now()
	h.srv.shutdown(500 * time.Millisecond)
	elapsed := time.Since(start)
	if !cleanedUp.Load() {
		t.Error("shutdown did not wait for the call in flight")
	}
	if elapsed < 500*time.Millisecond || elapsed > time.Second {
		t.Errorf("shutdown took %s, want the 500ms grace (a Close hangs)", elapsed)
	}
	for _, f := range []*fakeSandbox{a, stuck} {
		select {
		case <-f.closed:
		default:
			t.Errorf("sandbox %s was not closed", f.name)
		}
	}
	close(stuck.release)
	if len(h.srv.open) != 0 {
		t.Errorf("%d handles left", len(h.srv.open))
	}
	if err := h.srv.enter(); status.Code(err) != codes.Unavailable {
		t.Errorf("a call after shutdown: %v", err)
	}
}

func TestRecvErrorKeepsStatus(t *testing.T) {
	st := status.Error(codes.Canceled, "gone")
	if recvError(st) != st {
		t.Fatal("a status error must pass through")
	}
	if got := status.Code(recvError(io.ErrUnexpectedEOF)); got != codes.Unavailable {
		t.Fatalf("plain error: %v", got)
	}
}
