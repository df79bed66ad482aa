package plugin

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/runtime/protoiface"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
)

// The calls socket carries the Calls stream's messages outside gRPC (see
// the proto): a socketpair the host makes at launch, one end kept, the
// other inherited by the plugin. Per call it saves what HTTP/2 and TLS
// cost on two goroutines a side, which on a small machine is most of the
// hop. It needs no authentication: only the two processes hold it.

// frameHeader is a frame's length prefix.
const frameHeader = 4

// keptFrameBuffer bounds the send buffer a frameConn keeps between
// frames: a chunk of output or stdin fits, so a call's output costs no
// allocation per chunk.
const keptFrameBuffer = ChunkSize + 64<<10

// socketBuffer is what the calls socket asks the kernel to buffer each
// way: a chunk of output (flushAt, 256 KiB) then goes in one write, not
// in turns with the reader. The kernel caps it at net.core.wmem_max.
const socketBuffer = 1 << 20

// readBuffer sizes the reader of frames: a call's messages, but for
// large chunks, which are read straight into their own buffer.
const readBuffer = 64 << 10

// frameConn sends and receives length-prefixed protobuf messages. Sends
// are whole frames under a lock, so concurrent senders interleave
// frames, never bytes; one goroutine receives.
type frameConn struct {
	conn net.Conn
	r    *bufio.Reader

	wmu  sync.Mutex
	wbuf []byte

	closeOnce sync.Once
}

func newFrameConn(conn net.Conn) *frameConn {
	if uc, ok := conn.(*net.UnixConn); ok {
		// Best effort: a smaller buffer only costs the large chunks time.
		_ = uc.SetWriteBuffer(socketBuffer)
		_ = uc.SetReadBuffer(socketBuffer)
	}
	return &frameConn{conn: conn, r: bufio.NewReaderSize(conn, readBuffer)}
}

// protocolError is a frame the peer should not have sent: the
// connection is not to be read further.
type protocolError struct{ err error }

func (e *protocolError) Error() string { return "calls socket: " + e.err.Error() }
func (e *protocolError) Unwrap() error { return e.err }

// errFrameTooLarge is a frame over maxMessage, sent or announced.
var errFrameTooLarge = fmt.Errorf("frame over %d bytes", maxMessage)

// send writes m as one frame.
func (f *frameConn) send(m proto.Message) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	buf, err := proto.MarshalOptions{}.MarshalAppend(append(f.wbuf[:0], 0, 0, 0, 0), m)
	if err != nil {
		return fmt.Errorf("calls socket: encode: %w", err)
	}
	n := len(buf) - frameHeader
	if n > maxMessage {
		return fmt.Errorf("calls socket: %w", errFrameTooLarge)
	}
	binary.BigEndian.PutUint32(buf, uint32(n)) // #nosec G115 -- n <= maxMessage, checked above
	_, err = f.conn.Write(buf)
	if cap(buf) <= keptFrameBuffer {
		f.wbuf = buf[:0]
	}
	return err
}

// receive reads the next frame into m. A peer that announces more than
// maxMessage, or sends what does not decode, has broken the protocol:
// the error says so and the connection is not to be read further.
func (f *frameConn) receive(m proto.Message) error {
	var hdr [frameHeader]byte
	if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxMessage {
		return &protocolError{errFrameTooLarge}
	}
	// A buffer of its own per frame, which the message's bytes fields
	// alias instead of copying: a chunk of output is copied once, from
	// the socket, not twice.
	buf := make([]byte, n)
	if _, err := io.ReadFull(f.r, buf); err != nil {
		return noEOF(err)
	}
	in := protoiface.UnmarshalInput{Message: m.ProtoReflect(), Buf: buf, Flags: protoiface.UnmarshalAliasBuffer}
	if _, err := (proto.UnmarshalOptions{}).UnmarshalState(in); err != nil {
		return &protocolError{fmt.Errorf("decode: %w", err)}
	}
	return nil
}

// noEOF is err, with an EOF inside a frame said as what it is.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// close ends the connection; sends and receives blocked on it return.
func (f *frameConn) close() {
	f.closeOnce.Do(func() { _ = f.conn.Close() })
}

// socketCalls is the host's side of Calls on the socket, as
// callMux uses a Calls stream.
type socketCalls struct{ *frameConn }

func (s socketCalls) Send(m *sandboxpb.CallInput) error { return s.send(m) }

func (s socketCalls) Recv() (*sandboxpb.CallOutput, error) {
	m := new(sandboxpb.CallOutput)
	return m, s.receive(m)
}

// socketServe is the plugin's side, as serveCalls uses a Calls stream.
type socketServe struct{ *frameConn }

func (s socketServe) Send(m *sandboxpb.CallOutput) error { return s.send(m) }

func (s socketServe) Recv() (*sandboxpb.CallInput, error) {
	m := new(sandboxpb.CallInput)
	return m, s.receive(m)
}

// CallsSocket is the host's end of a plugin's calls socket, from launch
// until the plugin's Client takes it (Client.OfferCallsSocket).
type CallsSocket struct {
	host  net.Conn
	child *os.File // the plugin's end, until the plugin has started
}

// NewCallsSocket makes a socketpair: its ends are close-on-exec here,
// so no command the host runs inherits either; Attach hands the
// plugin's end to one command.
func NewCallsSocket() (*CallsSocket, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("calls socket: %w", err)
	}
	hostFile := os.NewFile(uintptr(fds[0]), "calls-socket")
	defer hostFile.Close() // FileConn holds a duplicate
	host, err := net.FileConn(hostFile)
	if err != nil {
		_ = syscall.Close(fds[1])
		return nil, fmt.Errorf("calls socket: %w", err)
	}
	return &CallsSocket{host: host, child: os.NewFile(uintptr(fds[1]), "calls-socket-plugin")}, nil
}

// Attach passes the plugin's end to cmd: into cmd.ExtraFiles, named by
// EnvCallsFD in cmd.Env. Call it before cmd starts, and CloseChild once
// it has.
func (s *CallsSocket) Attach(cmd *exec.Cmd) {
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, s.child)
	cmd.Env = append(cmd.Env, EnvCallsFD+"="+strconv.Itoa(fd))
}

// CloseChild releases the host's copy of the plugin's end: the plugin
// has its own from the moment it started. Without it, the host would
// not see the plugin's end close when the plugin dies.
func (s *CallsSocket) CloseChild() {
	if s.child != nil {
		_ = s.child.Close()
		s.child = nil
	}
}

// Close releases both ends; after Client.OfferCallsSocket, the host's
// end is the Client's and Close leaves it.
func (s *CallsSocket) Close() {
	s.CloseChild()
	if s.host != nil {
		_ = s.host.Close()
		s.host = nil
	}
}

// takeHost hands the host's end over: the caller closes it from now on.
func (s *CallsSocket) takeHost() net.Conn {
	c := s.host
	s.host = nil
	return c
}

// takeCallsSocket is the plugin's end of the calls socket, when the host
// passed one: the descriptor EnvCallsFD names, if it is a unix stream
// socket, as a connection whose descriptor is close-on-exec. The
// inherited descriptor is closed and the variable removed, so neither
// reaches a command the plugin runs. nil, nil: no socket was passed.
func takeCallsSocket() (net.Conn, error) {
	v, ok := os.LookupEnv(EnvCallsFD)
	if !ok {
		return nil, nil
	}
	os.Unsetenv(EnvCallsFD)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not an inherited file descriptor", EnvCallsFD, v)
	}
	typ, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TYPE)
	if err != nil || typ != syscall.SOCK_STREAM {
		return nil, fmt.Errorf("%s=%d: not a stream socket", EnvCallsFD, fd)
	}
	f := os.NewFile(uintptr(fd), "calls-socket")
	defer f.Close() // FileConn holds a close-on-exec duplicate
	conn, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("%s=%d: %w", EnvCallsFD, fd, err)
	}
	if _, ok := conn.(*net.UnixConn); !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("%s=%d: not a unix socket", EnvCallsFD, fd)
	}
	return conn, nil
}
