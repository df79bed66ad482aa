package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/altairalabs/promptkit-sandbox/shared/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// RawHopRequest and RawHopResponse are the frames of the raw hop: a
// uint32 length, then JSON.
type RawHopRequest struct {
	Command string
	Args    []string
	Stdin   []byte
}

type RawHopResponse struct {
	Stdout, Stderr []byte
	Err            string
}

// serveRawHop answers spawn requests through the direct backend on a bare
// unix socket: no gRPC, no TLS, no go-plugin. BenchmarkSpawnRawHop uses
// it to measure what a second process costs by itself, the floor under
// any plugin protocol. It serves one connection and returns when the
// connection closes.
func serveRawHop(path string) error {
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
	sb := direct.New("rawhop", shell.Options{})
	r := bufio.NewReader(conn)
	for {
		var req RawHopRequest
		if err := readFrame(r, &req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: req.Command, Args: req.Args, Stdin: req.Stdin})
		out := RawHopResponse{Stdout: resp.Stdout, Stderr: resp.Stderr}
		if err != nil {
			out.Err = err.Error()
		}
		if err := writeFrame(conn, out); err != nil {
			return err
		}
	}
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
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	_, err = w.Write(append(frame, b...))
	return err
}

func rawHopMain(path string) {
	if err := serveRawHop(path); err != nil {
		fmt.Fprintln(os.Stderr, "testplugin raw hop:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
