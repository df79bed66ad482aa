// Package rawhop runs a backend in a second process with nothing but a
// unix socket between: no gRPC, no TLS, no go-plugin. Frames are a
// uint32 length, then JSON. It exists for BenchmarkSpawnRawHop, which
// measures what a second process costs by itself, the floor under any
// plugin protocol on the machine in hand. It is not a protocol to ship:
// there is no authentication and one connection at a time.
package rawhop

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

type request struct {
	Command string
	Args    []string
	Stdin   []byte
}

type response struct {
	Stdout, Stderr []byte
	Err            string
}

// Serve listens on the unix socket path, accepts one connection and
// answers its requests with sb until the connection closes.
func Serve(path string, sb sandbox.Sandbox) error {
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	defer l.Close()
	conn, err := l.Accept()
	if err != nil {
		return err
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		var req request
		if err := readFrame(r, &req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: req.Command, Args: req.Args, Stdin: req.Stdin})
		out := response{Stdout: resp.Stdout, Stderr: resp.Stderr}
		if err != nil {
			out.Err = err.Error()
		}
		if err := writeFrame(conn, out); err != nil {
			return err
		}
	}
}

// Client is a sandbox whose calls go to a Serve on the other end of
// conn, one at a time. Env and Timeout are not carried.
type Client struct {
	conn net.Conn
	r    *bufio.Reader
}

// NewClient returns a Client that talks over conn.
func NewClient(conn net.Conn) *Client {
	return &Client{conn: conn, r: bufio.NewReader(conn)}
}

// Name is "rawhop".
func (c *Client) Name() string { return "rawhop" }

// Spawn sends req and waits for the answer; ctx is not watched.
func (c *Client) Spawn(_ context.Context, req sandbox.Request) (sandbox.Response, error) {
	if err := writeFrame(c.conn, request{Command: req.Command, Args: req.Args, Stdin: req.Stdin}); err != nil {
		return sandbox.Response{}, err
	}
	var resp response
	if err := readFrame(c.r, &resp); err != nil {
		return sandbox.Response{}, err
	}
	if resp.Err != "" {
		return sandbox.Response{}, fmt.Errorf("raw hop: %s", resp.Err)
	}
	return sandbox.Response{Stdout: resp.Stdout, Stderr: resp.Stderr}, nil
}

func readFrame(r io.Reader, v any) error {
	var n uint32
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return err
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return err
	}
	return json.Unmarshal(buf, v)
}

func writeFrame(w io.Writer, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	// #nosec G115 -- rawhop carries a benchmark's few-KiB requests; it is not a protocol to ship (package doc)
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	_, err = w.Write(append(frame, body...))
	return err
}
