package plugin

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// Calls serves many calls on one stream (see the proto): each start runs
// as Spawn would run it, its output tagged with its id. A call is not a
// stream of its own, which is what makes it cheap: no headers, no
// handler, no trailers per call, only the messages. The calls in flight
// end with the stream, as a Spawn call ends with its own.
func (s *server) Calls(stream sandboxpb.Sandbox_CallsServer) error {
	if s.noCalls {
		return status.Error(codes.Unimplemented, "this plugin serves every call on a Spawn stream of its own")
	}
	if err := s.serveCalls(stream.Context(), stream); err != nil {
		return recvError(err)
	}
	return nil
}

// callsStream is one side of a Calls stream as the plugin serves it: the
// gRPC stream, or the calls socket.
type callsStream interface {
	Send(*sandboxpb.CallOutput) error
	Recv() (*sandboxpb.CallInput, error)
}

// serveCalls serves the calls stream brings until it ends or ctx does,
// and returns once every call has sent its last: nil when the host ended
// the stream, what ended it otherwise.
func (s *server) serveCalls(ctx context.Context, stream callsStream) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mux := &callsServer{stream: stream, cancels: make(map[uint64]func()), runners: newRunners()}
	defer mux.runners.stop()
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: every call has sent its last
	for {
		in, err := stream.Recv()
		if err != nil {
			cancel()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		switch m := in.GetMsg().(type) {
		case *sandboxpb.CallInput_Start:
			s.startCall(ctx, mux, in.GetId(), m.Start, &wg)
		case *sandboxpb.CallInput_Cancel:
			mux.cancel(in.GetId())
		default:
			cancel()
			return status.Error(codes.InvalidArgument, "call message with neither start nor cancel")
		}
	}
}

// startCall checks a start as Spawn does and runs the call in a goroutine
// of its own; a start that cannot run is refused with the status Spawn
// would have ended with.
func (s *server) startCall(ctx context.Context, mux *callsServer, id uint64, start *sandboxpb.SpawnStart, wg *sync.WaitGroup) {
	req, sb, err := s.callRequest(start)
	if err == nil {
		err = s.enter()
	}
	if err != nil {
		mux.refuse(id, err)
		return
	}
	cctx, cancel := enterCall(ctx, start)
	out := newStreamWriter(callSender{mux: mux, id: id})
	if !mux.track(id, func() { out.flush(); cancel() }) {
		cancel()
		s.leave()
		mux.refuse(id, status.Errorf(codes.InvalidArgument, "call id %d is already in flight", id))
		return
	}
	wg.Add(1)
	mux.runners.run(func() {
		defer wg.Done()
		defer mux.untrack(id)
		defer cancel()
		// A send error means the stream is gone; its Recv ends the loop.
		_ = s.run(tracing.ExtractMap(cctx, start.GetTraceContext()), sb, req, out)
	})
}

// callRequest is the request a start on Calls makes, checked as Spawn
// checks its own; its stdin must be complete.
func (s *server) callRequest(start *sandboxpb.SpawnStart) (req sandbox.Request, sb sandbox.Sandbox, err error) {
	if !start.GetStdinComplete() {
		return req, nil, status.Error(codes.InvalidArgument, "a call on Calls carries all of its stdin in its start: use Spawn for more")
	}
	if int64(len(start.GetStdin())) != start.GetStdinSize() {
		return req, nil, status.Errorf(codes.InvalidArgument, "start carries %d bytes of stdin, %d announced", len(start.GetStdin()), start.GetStdinSize())
	}
	if sb, err = s.lookup(start.GetHandle()); err != nil {
		return req, nil, err
	}
	req, err = requestOf(start, start.GetStdin())
	return req, sb, err
}

// callsServer is the plugin's side of one Calls stream: one sender at a
// time, the cancels of the calls in flight, and the goroutines that run
// them.
type callsServer struct {
	stream  callsStream
	send    sync.Mutex
	runners *runners

	mu      sync.Mutex
	cancels map[uint64]func()
}

func (m *callsServer) track(id uint64, cancel func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, taken := m.cancels[id]; taken {
		return false
	}
	m.cancels[id] = cancel
	return true
}

func (m *callsServer) untrack(id uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cancels, id)
}

// cancel ends the call id, as Cancel would; a call that has ended is no
// error: its result is on the way or gone.
func (m *callsServer) cancel(id uint64) {
	m.mu.Lock()
	cancel := m.cancels[id]
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (m *callsServer) refuse(id uint64, err error) {
	st := status.Convert(err)
	_ = m.sendOut(&sandboxpb.CallOutput{Id: id, Msg: &sandboxpb.CallOutput_Refused{
		Refused: &sandboxpb.CallRefused{Code: uint32(st.Code()), Message: st.Message()},
	}})
}

func (m *callsServer) sendOut(msg *sandboxpb.CallOutput) error {
	m.send.Lock()
	defer m.send.Unlock()
	return m.stream.Send(msg)
}

// callSender sends one call's output on the shared stream.
type callSender struct {
	mux *callsServer
	id  uint64
}

func (c callSender) Send(msg *sandboxpb.SpawnOutput) error {
	out := &sandboxpb.CallOutput{Id: c.id}
	switch m := msg.GetMsg().(type) {
	case *sandboxpb.SpawnOutput_Stdout:
		out.Msg = &sandboxpb.CallOutput_Stdout{Stdout: m.Stdout}
	case *sandboxpb.SpawnOutput_Stderr:
		out.Msg = &sandboxpb.CallOutput_Stderr{Stderr: m.Stderr}
	case *sandboxpb.SpawnOutput_Result:
		out.Msg = &sandboxpb.CallOutput_Result{Result: m.Result}
	}
	return c.mux.sendOut(out)
}

// serveCallsSocket serves Calls on the calls socket until the host
// closes it or the plugin shuts down (shutdown closes it, which ends its
// calls as the gRPC server's stop ends a stream's).
func (s *server) serveCallsSocket() {
	err := s.serveCalls(context.Background(), socketServe{s.socket})
	s.socket.close()
	var broken *protocolError
	switch {
	case errors.As(err, &broken) || status.Code(err) == codes.InvalidArgument:
		s.log.Warn("calls socket: the host broke the protocol; calls go over gRPC now", "error", err)
	case err != nil:
		s.log.Debug("calls socket closed", "error", err)
	}
}
