package plugin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
)

// callMux is the host's side of a plugin connection's Calls stream: one
// stream, opened at the first call and kept, carrying every call whose
// stdin fits one message. A stream that breaks fails the calls it
// carried; the next call opens another.
type callMux struct {
	rpc    sandboxpb.SandboxClient
	socket *frameConn // the calls socket, until the stream on it ends

	mu     sync.Mutex
	cur    *callStream
	nextID uint64
}

// callStream is one Calls stream and the calls in flight on it.
type callStream struct {
	stream callsClientStream
	end    func()     // ends the stream, failing its calls
	send   sync.Mutex // one sender at a time

	mu     sync.Mutex
	calls  map[uint64]*muxCall
	broken error // why the stream ended; no call is added after
}

// add registers a new call on the current stream, opening one if there
// is none.
func (m *callMux) add(limit int) (*callStream, *muxCall, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		stream, end, err := m.open()
		if err != nil {
			return nil, nil, err
		}
		cs := &callStream{stream: stream, end: end, calls: make(map[uint64]*muxCall)}
		m.cur = cs
		go m.receive(cs)
	}
	m.nextID++
	c := &muxCall{id: m.nextID, limit: limit, ready: make(chan struct{}, 1)}
	cs := m.cur
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.broken != nil {
		return nil, nil, cs.broken
	}
	cs.calls[c.id] = c
	return cs, c, nil
}

// callsClientStream is the host's side of a Calls stream: the gRPC
// stream, or the calls socket.
type callsClientStream interface {
	Send(*sandboxpb.CallInput) error
	Recv() (*sandboxpb.CallOutput, error)
}

// open starts a Calls stream: on the calls socket, once; on gRPC when
// there is none or the one stream it carries has ended (a socketpair
// cannot be dialled again).
func (m *callMux) open() (callsClientStream, func(), error) {
	if fc := m.socket; fc != nil {
		m.socket = nil
		return socketCalls{fc}, fc.close, nil
	}
	ctx, end := context.WithCancel(context.Background())
	stream, err := m.rpc.Calls(ctx, grpc.MaxCallRecvMsgSize(maxMessage))
	if err != nil {
		end()
		return nil, nil, err
	}
	return stream, end, nil
}

// receive hands each message to its call until the stream ends, then
// fails the calls still on it.
func (m *callMux) receive(cs *callStream) {
	for {
		msg, err := cs.stream.Recv()
		if err != nil {
			m.mu.Lock()
			if m.cur == cs {
				m.cur = nil
			}
			m.mu.Unlock()
			cs.fail(err)
			return
		}
		cs.mu.Lock()
		c := cs.calls[msg.GetId()]
		switch msg.GetMsg().(type) {
		case *sandboxpb.CallOutput_Result, *sandboxpb.CallOutput_Refused:
			delete(cs.calls, msg.GetId())
		}
		cs.mu.Unlock()
		if c != nil { // nil: a call the host gave up on
			c.push(msg)
		}
	}
}

// fail ends the stream and every call on it with err.
func (cs *callStream) fail(err error) {
	cs.end()
	cs.mu.Lock()
	if cs.broken == nil {
		cs.broken = err
	}
	calls := cs.calls
	cs.calls = nil
	cs.mu.Unlock()
	for _, c := range calls {
		c.finish(err)
	}
}

// drop forgets call c: what the plugin still sends for it is discarded.
func (cs *callStream) drop(c *muxCall) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.calls, c.id)
}

func (cs *callStream) sendIn(msg *sandboxpb.CallInput) error {
	cs.send.Lock()
	defer cs.send.Unlock()
	return cs.stream.Send(msg)
}

// cancelCall tells the plugin the host gave up on c. It may wait on a
// plugin that reads nothing, so it runs on its own.
func (cs *callStream) cancelCall(c *muxCall) {
	go func() {
		_ = cs.sendIn(&sandboxpb.CallInput{Id: c.id, Msg: &sandboxpb.CallInput_Cancel{Cancel: &sandboxpb.CallCancel{}}})
	}()
}

// muxCall is one call's inbox: the messages the stream brought, held
// until the caller takes them, and the error that ended the call early.
// The stream's reader never waits on a caller (a slow writer of one
// call's output must not hold up the others), so the inbox keeps no more
// than the call's cap of each stream: past it, output is counted as
// truncated and dropped here.
type muxCall struct {
	id      uint64
	limit   int
	sending atomic.Bool // the start is being sent

	mu         sync.Mutex
	inbox      []*sandboxpb.CallOutput
	nout, nerr int
	ended      bool
	err        error // set once: why the call ended without a result
	ready      chan struct{}
}

func (c *muxCall) push(msg *sandboxpb.CallOutput) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	switch m := msg.GetMsg().(type) {
	case *sandboxpb.CallOutput_Stdout:
		if m.Stdout = c.keep(&c.nout, m.Stdout); m.Stdout == nil {
			return
		}
	case *sandboxpb.CallOutput_Stderr:
		if m.Stderr = c.keep(&c.nerr, m.Stderr); m.Stderr == nil {
			return
		}
	default:
		c.ended = true
	}
	c.inbox = append(c.inbox, msg)
	c.signal()
}

// keep is what of p fits under the cap, given n bytes kept before; the
// caller's sink records the truncation when it sees more than the cap,
// so one byte past it is kept.
func (c *muxCall) keep(n *int, p []byte) []byte {
	room := c.limit + 1 - *n
	if room <= 0 {
		return nil
	}
	p = p[:min(len(p), room)]
	*n += len(p)
	return p
}

// finish ends the call with err unless it has ended already.
func (c *muxCall) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended, c.err = true, err
	c.signal()
}

func (c *muxCall) signal() {
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// take waits for what came, returning it and the error that ended the
// call, if that is what happened.
func (c *muxCall) take() ([]*sandboxpb.CallOutput, error) {
	<-c.ready
	c.mu.Lock()
	defer c.mu.Unlock()
	msgs := c.inbox
	c.inbox = nil
	if c.err != nil && len(msgs) == 0 {
		return nil, c.err
	}
	if c.err != nil {
		c.signal() // the error waits behind these
	}
	return msgs, nil
}

// errNoResult is a Calls stream's end with no word of why.
var errNoResult = errors.New("stream ended without a result")
