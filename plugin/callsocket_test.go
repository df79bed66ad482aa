package plugin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// With a calls socket, every call whose stdin fits a message goes on it:
// no gRPC stream is opened; a larger stdin still has a Spawn stream.
func TestCallsGoOnTheSocket(t *testing.T) {
	checkGoroutines(t)
	h, cs := startCounting(t, ServeOpts{}, false)
	attachCallsSocket(t, h.client, h.srv)
	rs := h.open(t, "socket", "direct", nil)
	for range 5 {
		echo(t, rs, []byte("small"))
	}
	echo(t, rs, bytes.Repeat([]byte("x"), ChunkSize))
	if c, s := cs.calls.Load(), cs.spawns.Load(); c != 0 || s != 0 {
		t.Errorf("%d Calls and %d Spawn streams on gRPC, want none", c, s)
	}
	echo(t, rs, bytes.Repeat([]byte("y"), ChunkSize+1))
	if got := cs.spawns.Load(); got != 1 {
		t.Errorf("%d Spawn streams for stdin over a message, want 1", got)
	}
}

// A socket that breaks fails the call it carried as a lost connection;
// the next call goes over gRPC's Calls stream, since a socketpair cannot
// be dialled again.
func TestCallsSocketBreakFallsBackToGRPC(t *testing.T) {
	checkGoroutines(t)
	h, cs := startCounting(t, ServeOpts{}, false)
	attachCallsSocket(t, h.client, h.srv)
	rs := h.open(t, "break", "direct", nil)
	echo(t, rs, []byte("before"))
	done := make(chan error, 1)
	go func() {
		_, err := rs.Spawn(context.Background(), sandbox.Request{Command: "sleep", Args: []string{"30"}})
		done <- err
	}()
	waitInFlight(t, h.srv)
	h.srv.socket.close()
	err := <-done
	if sandbox.KindOf(err) != sandbox.KindTransport || !strings.HasPrefix(err.Error(), "plugin testplug: connection lost: ") {
		t.Fatalf("call on the broken socket: %v, want a lost connection naming the plugin", err)
	}
	echo(t, rs, []byte("after"))
	if got := cs.calls.Load(); got != 1 {
		t.Errorf("%d Calls streams on gRPC after the socket broke, want 1", got)
	}
}

// waitInFlight waits until srv runs a call.
func waitInFlight(t *testing.T, srv *server) {
	t.Helper()
	for range 500 {
		srv.mu.Lock()
		n := srv.active
		srv.mu.Unlock()
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no call reached the plugin")
}

// A plugin that does not say it serves the socket (one that predates
// it) is not sent a byte on it, and the host closes its end.
func TestCallsSocketUnannouncedIsClosed(t *testing.T) {
	checkGoroutines(t)
	h, cs := startCounting(t, ServeOpts{}, false)
	s, plugEnd := newCallsSocket(t)
	defer plugEnd.Close()
	h.client.OfferCallsSocket(s)
	rs := h.open(t, "old", "direct", nil)
	echo(t, rs, []byte("over grpc"))
	if got := cs.calls.Load(); got != 1 {
		t.Errorf("%d Calls streams on gRPC, want 1", got)
	}
	if n, err := plugEnd.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("plugin's end read %d bytes, %v; want EOF (the host closed its end unused)", n, err)
	}
}

// Frames round-trip; an oversized or undecodable frame is a protocol
// error, not a message or a panic.
func TestFrameConn(t *testing.T) {
	a, b := socketPair(t)
	fa, fb := newFrameConn(a), newFrameConn(b)
	big := bytes.Repeat([]byte("z"), 3<<20)
	for _, msg := range []*sandboxpb.CallOutput{
		{Id: 1, Msg: &sandboxpb.CallOutput_Stdout{Stdout: []byte("hello")}},
		{Id: 2, Msg: &sandboxpb.CallOutput_Stderr{Stderr: big}},
		{Id: 3, Msg: &sandboxpb.CallOutput_Result{Result: &sandboxpb.SpawnResult{ExitCode: 7}}},
	} {
		go func() { _ = fa.send(msg) }()
		got, err := socketCalls{fb}.Recv()
		if err != nil || got.GetId() != msg.GetId() || !bytes.Equal(got.GetStderr(), msg.GetStderr()) ||
			got.GetResult().GetExitCode() != msg.GetResult().GetExitCode() {
			t.Fatalf("frame %d: got %v, %v", msg.GetId(), got.GetId(), err)
		}
	}
	if err := fa.send(&sandboxpb.CallOutput{Msg: &sandboxpb.CallOutput_Stdout{Stdout: make([]byte, maxMessage)}}); err == nil {
		t.Error("a frame over maxMessage was sent")
	}

	for name, raw := range map[string][]byte{
		"oversized": binary.BigEndian.AppendUint32(nil, maxMessage+1),
		"garbage":   append(binary.BigEndian.AppendUint32(nil, 3), 0xff, 0xff, 0xff),
	} {
		a, b := socketPair(t)
		go func() { _, _ = a.Write(raw) }()
		var perr *protocolError
		if _, err := (socketServe{newFrameConn(b)}).Recv(); !errors.As(err, &perr) {
			t.Errorf("%s: %v, want a protocol error", name, err)
		}
	}
	a, b = socketPair(t)
	go func() { _, _ = a.Write([]byte{0, 0, 0, 9, 1}); _ = a.Close() }()
	if _, err := (socketServe{newFrameConn(b)}).Recv(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a frame cut short: %v, want io.ErrUnexpectedEOF", err)
	}
}

func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	s, child := newCallsSocket(t)
	host := s.takeHost()
	t.Cleanup(func() { _ = host.Close(); _ = child.Close() })
	return host, child
}

// takeCallsSocket takes a unix stream socket, closes the inherited
// descriptor and unsets the variable; it refuses anything else.
func TestTakeCallsSocket(t *testing.T) {
	t.Setenv(EnvCallsFD, "")
	os.Unsetenv(EnvCallsFD)
	if conn, err := takeCallsSocket(); conn != nil || err != nil {
		t.Fatalf("without %s: %v, %v", EnvCallsFD, conn, err)
	}

	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	t.Setenv(EnvCallsFD, fmt.Sprint(fds[1]))
	conn, err := takeCallsSocket()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, ok := os.LookupEnv(EnvCallsFD); ok {
		t.Error(EnvCallsFD + " is still set")
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fds[1], &st); err == nil {
		t.Error("the inherited descriptor is still open")
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, v := range []string{fmt.Sprint(r.Fd()), "2", "x", "-1"} {
		t.Setenv(EnvCallsFD, v)
		if conn, err := takeCallsSocket(); conn != nil || err == nil {
			t.Errorf("%s=%s: %v, %v; want refused", EnvCallsFD, v, conn, err)
		}
	}
}
