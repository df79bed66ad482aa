package plugin

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestServerOverAListener serves the direct mode with NewServer on a unix
// socket, reaches it with NewClient, and checks a call's output and typed
// exit, a cancelled call, and that Stop closes what was opened and ends a
// call in flight.
func TestServerOverAListener(t *testing.T) {
	lis, sock := unixListener(t)
	srv, err := NewServer(ServeOpts{Name: "local", Version: "0.0.0-dev", Modes: map[string]sandbox.Factory{"direct": direct.Factory}})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			srv.Stop(time.Second)
		}
	})

	conn, err := grpc.NewClient("unix://"+sock, append(DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := NewClient(conn)
	ctx := context.Background()
	sb, err := client.Open(ctx, "box", "direct", nil)
	if err != nil {
		t.Fatal(err)
	}
	if client.PluginName() != "local" {
		t.Errorf("plugin name %q", client.PluginName())
	}
	resp, err := sb.Spawn(ctx, sandbox.Request{Command: "sh", Args: []string{"-c", "cat; echo err >&2; exit 3"}, Stdin: []byte("in\n")})
	var xe *sandbox.ExitError
	if !errors.As(err, &xe) || xe.Code != 3 || string(resp.Stdout) != "in\n" || string(resp.Stderr) != "err\n" {
		t.Fatalf("spawn: %v %q %q", err, resp.Stdout, resp.Stderr)
	}

	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := sb.Spawn(cctx, sandbox.Request{Command: "sleep", Args: []string{"30"}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled call: %v", err)
	}

	// A call in flight when the server stops ends, as a lost connection.
	done := make(chan error, 1)
	go func() {
		_, err := sb.Spawn(ctx, sandbox.Request{Command: "sleep", Args: []string{"30"}})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	srv.Stop(time.Second)
	stopped = true
	select {
	case err := <-done:
		if sandbox.KindOf(err) != sandbox.KindTransport {
			t.Errorf("call in flight at Stop: %v, want a transport error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call in flight did not end at Stop")
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestNewServerChecksOptions(t *testing.T) {
	if _, err := NewServer(ServeOpts{Name: "x", Version: "dev"}); err == nil {
		t.Fatal("NewServer accepted a bad version and no modes")
	}
}
