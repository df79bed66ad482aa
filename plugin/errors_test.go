package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// targets are every error a caller branches on.
var targets = []error{
	sandbox.ErrTimeout, context.DeadlineExceeded, sandbox.ErrStart,
	sandbox.ErrTransport, sandbox.ErrCanceled, context.Canceled,
	ErrConnection, // a backend's error never looks like a broken hop
}

// sameError fails unless remote answers errors.Is, errors.As and KindOf
// exactly as local does, with the same message.
func sameError(t *testing.T, local, remote error) {
	t.Helper()
	if local == nil || remote == nil {
		t.Fatalf("local %v, remote %v: want both errors", local, remote)
	}
	if remote.Error() != local.Error() {
		t.Errorf("message %q, in-process %q", remote.Error(), local.Error())
	}
	if sandbox.KindOf(remote) != sandbox.KindOf(local) {
		t.Errorf("kind %v, in-process %v", sandbox.KindOf(remote), sandbox.KindOf(local))
	}
	for _, target := range targets {
		if errors.Is(remote, target) != errors.Is(local, target) {
			t.Errorf("errors.Is(_, %v) = %v, in-process %v", target, errors.Is(remote, target), errors.Is(local, target))
		}
	}
	var lx, rx *sandbox.ExitError
	if errors.As(local, &lx) != errors.As(remote, &rx) || (lx != nil && *lx != *rx) {
		t.Errorf("ExitError %+v, in-process %+v", rx, lx)
	}
}

func TestErrorsMatchInProcess(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	cfg := map[string]any{"kill_grace": "100ms"}
	local, err := direct.Factory(context.Background(), "errs", cfg)
	if err != nil {
		t.Fatal(err)
	}
	rs := h.open(t, "errs", "direct", cfg)
	cases := []struct {
		name string
		req  sandbox.Request
		kind sandbox.Kind
	}{
		{"timeout", sandbox.Request{Command: "sleep", Args: []string{"5"}, Timeout: 100 * time.Millisecond}, sandbox.KindTimeout},
		{"exit code", sandbox.Request{Command: "sh", Args: []string{"-c", "echo out; exit 3"}}, sandbox.KindExit},
		{"signal", sandbox.Request{Command: "sh", Args: []string{"-c", "kill -9 $$"}}, sandbox.KindExit},
		{"not found", sandbox.Request{Command: "/nonexistent/hook"}, sandbox.KindStart},
		{"empty command", sandbox.Request{}, sandbox.KindStart},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lresp, lerr := local.Spawn(context.Background(), tc.req)
			start := time.Now()
			resp, err := rs.Spawn(context.Background(), tc.req)
			sameError(t, lerr, err)
			if sandbox.KindOf(err) != tc.kind {
				t.Errorf("kind %v, want %v", sandbox.KindOf(err), tc.kind)
			}
			if resp.Err != err {
				t.Errorf("Response.Err %v is not the returned error %v", resp.Err, err)
			}
			if string(resp.Stdout) != string(lresp.Stdout) {
				t.Errorf("stdout %q, in-process %q", resp.Stdout, lresp.Stdout)
			}
			if tc.kind == sandbox.KindTimeout && time.Since(start) > 2*time.Second {
				t.Errorf("timeout took %s", time.Since(start))
			}
		})
	}
	var xe *sandbox.ExitError
	_, err = rs.Spawn(context.Background(), cases[2].req)
	if !errors.As(err, &xe) || xe.Code != 137 || xe.Signal != "killed" {
		t.Errorf("signal: %#v", err)
	}
}

// Errors a backend builds itself, wrapped or not, cross as they are.
func TestBackendErrorsRoundTrip(t *testing.T) {
	checkGoroutines(t)
	errs := []error{
		sandbox.NewError(sandbox.KindTransport, "docker daemon unreachable", io.ErrUnexpectedEOF),
		sandbox.NewError(sandbox.KindStart, `image "pii:1.2" is not present locally`, nil),
		sandbox.NewError(sandbox.KindCanceled, "pool shut down", nil),
		sandbox.NewError(sandbox.KindTimeout, "exec timed out after 3s", nil),
		sandbox.NewError(sandbox.KindExit, "exit without a code", nil),
		fmt.Errorf("hook pii: %w", &sandbox.ExitError{Code: 2}),
		&sandbox.ExitError{Code: 130, Signal: "interrupt"},
		fmt.Errorf("wrapped: %w", sandbox.ErrTimeout),
		errors.New("something nobody classified"),
	}
	h := startServer(t, nil)
	for i, want := range errs {
		name := fmt.Sprintf("err%d", i)
		addFake(t, &fakeSandbox{name: name, spawn: func(context.Context, sandbox.Request) (sandbox.Response, error) {
			return sandbox.Response{Stdout: []byte("partial"), Err: want}, want
		}})
		rs := h.open(t, name, "fake", nil)
		resp, err := rs.Spawn(context.Background(), sandbox.Request{Command: "x"})
		t.Run(want.Error(), func(t *testing.T) {
			sameError(t, want, err)
			if string(resp.Stdout) != "partial" || resp.Err != err {
				t.Errorf("response %+v", resp)
			}
		})
	}
}

func TestHostCancelKillsTheProcess(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "cancel", "direct", map[string]any{"kill_grace": "100ms"})
	pidFile := filepath.Join(t.TempDir(), "pid")
	req := sandbox.Request{Command: "sh", Args: []string{"-c", `echo $$ > "$0"; exec sleep 30`, pidFile}}
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		resp sandbox.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := rs.Spawn(ctx, req)
		done <- result{resp, err}
	}()
	pid := waitPid(t, pidFile)
	cancel()
	start := time.Now()
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Second):
		t.Fatal("Spawn did not return within 1s of the cancel")
	}
	t.Logf("returned %s after cancel", time.Since(start))
	want := sandbox.ContextError(ctx, `command "sh"`, 0)
	sameError(t, want, r.err)
	if !errors.Is(r.err, context.Canceled) || sandbox.KindOf(r.err) != sandbox.KindCanceled || r.resp.Err != r.err {
		t.Fatalf("err %v", r.err)
	}
	waitGone(t, pid, 3*time.Second)
}

func TestHostDeadline(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "deadline", "direct", map[string]any{"kill_grace": "100ms"})
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := rs.Spawn(ctx, sandbox.Request{Command: "sh", Args: []string{"-c", `echo $$ > "$0"; exec sleep 30`, pidFile}})
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("returned after %s", elapsed)
	}
	sameError(t, sandbox.ContextError(ctx, `command "sh"`, 0), err)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("err %v", err)
	}
	waitGone(t, waitPid(t, pidFile), 3*time.Second)

	// An already-finished context never reaches the plugin.
	_, err = rs.Spawn(ctx, sandbox.Request{Command: "true"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("done context: %v", err)
	}
}

func TestUnknownHandle(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs, err := h.client.Open(context.Background(), "gone", "direct", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rs.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	resp, err := rs.Spawn(context.Background(), sandbox.Request{Command: "true"})
	want := fmt.Sprintf(`plugin testplug: sandbox gone: unknown sandbox handle %q: closed, or opened in an earlier plugin process`, rs.handle)
	if err == nil || err.Error() != want || !errors.Is(err, sandbox.ErrStart) || resp.Err != err {
		t.Fatalf("Spawn after Close: %v\nwant %s (KindStart)", err, want)
	}
	// Close of a handle the plugin does not know.
	stale := &RemoteSandbox{client: h.client, plugin: testPlugin, name: "stale", handle: "feed"}
	if err := stale.Close(); err == nil || !strings.Contains(err.Error(), `unknown sandbox handle "feed"`) || !errors.Is(err, sandbox.ErrTransport) {
		t.Fatalf("Close of an unknown handle: %v", err)
	}
}

// A plugin that dies mid-call fails the call at once with a transport
// error that names it.
func TestServerDiesMidCall(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "victim", "direct", map[string]any{"kill_grace": "100ms"})
	pidFile := filepath.Join(t.TempDir(), "pid")
	done := make(chan error, 1)
	go func() {
		_, err := rs.Spawn(context.Background(), sandbox.Request{Command: "sh", Args: []string{"-c", `echo $$ > "$0"; exec sleep 30`, pidFile}})
		done <- err
	}()
	pid := waitPid(t, pidFile)
	start := time.Now()
	h.stopServing()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Second):
		t.Fatal("Spawn still running 1s after the server died")
	}
	t.Logf("returned %s after the server stopped: %v", time.Since(start), err)
	if !errors.Is(err, sandbox.ErrTransport) || !errors.Is(err, ErrConnection) || !strings.HasPrefix(err.Error(), "plugin testplug: connection lost: ") {
		t.Fatalf("err = %v, want KindTransport and ErrConnection naming the plugin", err)
	}
	// The server cancelled the call, so the backend killed its process.
	waitGone(t, pid, 3*time.Second)

	// Later calls fail the same way, at once.
	start = time.Now()
	_, err = rs.Spawn(context.Background(), sandbox.Request{Command: "true"})
	if !errors.Is(err, sandbox.ErrTransport) || time.Since(start) > time.Second {
		t.Fatalf("after the server died: %v (%s)", err, time.Since(start))
	}
}

// go-plugin reports the process exit on its context; calls in flight end
// at once, whatever the connection is doing.
func TestPluginExitEndsCallsInFlight(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	release := make(chan struct{})
	addFake(t, &fakeSandbox{name: "stuck", spawn: func(ctx context.Context, _ sandbox.Request) (sandbox.Response, error) {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return sandbox.Response{}, nil
	}})
	defer close(release)
	rs := h.open(t, "stuck", "fake", nil)
	done := make(chan error, 1)
	go func() {
		_, err := rs.Spawn(context.Background(), sandbox.Request{Command: "x"})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	h.exit()
	select {
	case err := <-done:
		if want := "plugin testplug: connection lost: plugin process exited"; err == nil || err.Error() != want || !errors.Is(err, sandbox.ErrTransport) || !errors.Is(err, ErrConnection) {
			t.Fatalf("err = %v, want %q", err, want)
		}
	case <-time.After(time.Second):
		t.Fatal("Spawn still running 1s after the plugin exited")
	}
	_, err := h.client.Describe(context.Background())
	if !errors.Is(err, sandbox.ErrTransport) {
		t.Fatalf("Describe after exit: %v", err)
	}
}

func TestBackendPanicIsAnError(t *testing.T) {
	checkGoroutines(t)
	addFake(t, &fakeSandbox{name: "boom", spawn: func(context.Context, sandbox.Request) (sandbox.Response, error) {
		panic("kaboom")
	}})
	h := startServer(t, nil)
	rs := h.open(t, "boom", "fake", nil)
	_, err := rs.Spawn(context.Background(), sandbox.Request{Command: "x"})
	if want := "sandbox boom: backend panicked: kaboom"; err == nil || err.Error() != want || sandbox.KindOf(err) != sandbox.KindUnknown {
		t.Fatalf("err = %v, want %q", err, want)
	}
	_, err = h.client.Open(context.Background(), "boom", "fake", map[string]any{"panic": true})
	if want := "sandbox boom: factory panicked: factory exploded"; err == nil || err.Error() != want {
		t.Fatalf("Open = %v, want %q", err, want)
	}
	// Still serving.
	if _, err := h.client.Describe(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// fakeService is a plugin that breaks the protocol in the ways a buggy
// plugin might.
type fakeService struct {
	sandboxpb.UnimplementedSandboxServer
	spawn func(sandboxpb.Sandbox_SpawnServer) error
	open  *sandboxpb.OpenResponse
}

func (f *fakeService) Describe(context.Context, *sandboxpb.DescribeRequest) (*sandboxpb.DescribeResponse, error) {
	return &sandboxpb.DescribeResponse{Name: "buggy", Version: "0.0.1", ProtocolVersion: ProtocolVersion}, nil
}

func (f *fakeService) Open(context.Context, *sandboxpb.OpenRequest) (*sandboxpb.OpenResponse, error) {
	return f.open, nil
}

func (f *fakeService) Spawn(s sandboxpb.Sandbox_SpawnServer) error { return f.spawn(s) }

func TestMisbehavingPlugin(t *testing.T) {
	checkGoroutines(t)
	drain := func(s sandboxpb.Sandbox_SpawnServer) error {
		for {
			if _, err := s.Recv(); err != nil {
				return nil
			}
		}
	}
	cases := []struct {
		name  string
		spawn func(sandboxpb.Sandbox_SpawnServer) error
		check func(error) bool
		want  string
	}{
		{"no result", func(s sandboxpb.Sandbox_SpawnServer) error {
			_ = drain(s)
			return s.Send(stdoutMsg([]byte("x")))
		}, isTransport, "plugin buggy: connection lost: stream ended without a result"},
		{"empty message", func(s sandboxpb.Sandbox_SpawnServer) error {
			_ = drain(s)
			return s.Send(&sandboxpb.SpawnOutput{})
		}, isTransport, "plugin buggy: spawn: protocol error: empty output message"},
		{"unknown kind", func(s sandboxpb.Sandbox_SpawnServer) error {
			_ = drain(s)
			return s.Send(&sandboxpb.SpawnOutput{Msg: &sandboxpb.SpawnOutput_Result{Result: &sandboxpb.SpawnResult{Kind: 99, Message: "from the future"}}})
		}, func(err error) bool { return sandbox.KindOf(err) == sandbox.KindUnknown }, "from the future"},
		{"status error", func(s sandboxpb.Sandbox_SpawnServer) error {
			return status.Error(codes.Internal, "oops")
		}, isTransport, "plugin buggy: connection lost: oops"},
		{"refused", func(s sandboxpb.Sandbox_SpawnServer) error {
			return status.Error(codes.InvalidArgument, "bad start")
		}, isTransport, "plugin buggy: spawn refused: bad start"},
		{"result before reading input", func(s sandboxpb.Sandbox_SpawnServer) error {
			return s.Send(&sandboxpb.SpawnOutput{Msg: &sandboxpb.SpawnOutput_Result{Result: &sandboxpb.SpawnResult{}}})
		}, func(err error) bool { return err == nil }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := startService(t, &fakeService{spawn: tc.spawn, open: &sandboxpb.OpenResponse{Handle: "h", OutputLimit: 10}})
			rs, err := h.client.Open(context.Background(), "s", "m", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = rs.Spawn(context.Background(), sandbox.Request{Command: "x", Stdin: make([]byte, 3<<20)})
			if !tc.check(err) || (err != nil && err.Error() != tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("no handle", func(t *testing.T) {
		h := startService(t, &fakeService{open: &sandboxpb.OpenResponse{}})
		_, err := h.client.Open(context.Background(), "s", "m", nil)
		if want := "plugin buggy: open sandbox s: no handle in the answer"; err == nil || err.Error() != want || !isTransport(err) {
			t.Fatalf("err = %v, want %q", err, want)
		}
	})
	t.Run("absurd output limit", func(t *testing.T) {
		h := startService(t, &fakeService{open: &sandboxpb.OpenResponse{Handle: "h", OutputLimit: 1 << 50}})
		rs, err := h.client.Open(context.Background(), "s", "m", nil)
		if err != nil || rs.OutputLimit() != maxOutputLimit {
			t.Fatalf("Open: %v, limit %d", err, rs.OutputLimit())
		}
	})
}

func isTransport(err error) bool { return errors.Is(err, sandbox.ErrTransport) }

func TestResultEncoding(t *testing.T) {
	// Every kind has a wire value and comes back as itself.
	for k := sandbox.KindUnknown; k <= sandbox.KindCanceled; k++ {
		w, ok := kindToWire[k]
		if !ok {
			t.Fatalf("kind %v has no wire value", k)
		}
		if k != sandbox.KindUnknown && kindFromWire[w] != k {
			t.Fatalf("kind %v comes back as %v", k, kindFromWire[w])
		}
	}
	res := resultOf(sandbox.Response{StdoutTruncated: true}, nil)
	want := &sandboxpb.SpawnResult{StdoutTruncated: true}
	if !reflect.DeepEqual(res.String(), want.String()) || errorOf(res) != nil {
		t.Fatalf("success: %v", res)
	}
}

// TestOpenErrorsKeepTheirKind: a sandbox that could not open for a
// reason of its own (its engine unreachable) comes back as that kind,
// never as a broken connection; a configuration the factory rejects
// comes back as its plain words.
func TestOpenErrorsKeepTheirKind(t *testing.T) {
	h := startServer(t, map[string]sandbox.Factory{
		"down": func(context.Context, string, map[string]any) (sandbox.Sandbox, error) {
			return nil, sandbox.NewError(sandbox.KindTransport, "docker engine at unix:///x.sock is unreachable", nil)
		},
		"picky": func(context.Context, string, map[string]any) (sandbox.Sandbox, error) {
			return nil, errors.New(`config: unknown key "colour"`)
		},
	})
	_, err := h.client.Open(context.Background(), "s", "down", nil)
	if !errors.Is(err, sandbox.ErrTransport) || errors.Is(err, ErrConnection) || err.Error() != "docker engine at unix:///x.sock is unreachable" {
		t.Errorf("down: %v (kind %v)", err, sandbox.KindOf(err))
	}
	_, err = h.client.Open(context.Background(), "s", "picky", nil)
	if err == nil || sandbox.KindOf(err) != sandbox.KindUnknown || err.Error() != `config: unknown key "colour"` {
		t.Errorf("picky: %v (kind %v)", err, sandbox.KindOf(err))
	}
}
