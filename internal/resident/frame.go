package resident

import (
	"encoding/binary"
	"fmt"
	"io"
)

// A frame is a type byte, a call ID and a payload length (both uint32,
// big-endian), then the payload.
const headerLen = 9

// maxPayload bounds a frame's payload; stdin and output travel in chunks
// of at most chunkSize.
const (
	maxPayload = 1 << 20
	chunkSize  = 128 << 10
)

// Frame types. The backend sends start, stdin, stdin-end and kill; the
// resident sends hello (once, call 0), stdout, stderr and exit.
const (
	frameHello    byte = 'H'
	frameStart    byte = 'S'
	frameStdin    byte = 'I'
	frameStdinEnd byte = 'E'
	frameKill     byte = 'K'
	frameStdout   byte = 'O'
	frameStderr   byte = 'R'
	frameExit     byte = 'X'
)

// ProtocolVersion is what the resident announces in its hello; a client
// refuses a resident that speaks another.
const ProtocolVersion = 1

type frame struct {
	kind    byte
	call    uint32
	payload []byte
}

// writeFrame writes f in one Write, so frames from concurrent writers
// (serialized by the caller) never interleave on the stream.
func writeFrame(w io.Writer, f frame) error {
	if len(f.payload) > maxPayload {
		return fmt.Errorf("resident: frame of %d bytes exceeds %d", len(f.payload), maxPayload)
	}
	buf := make([]byte, headerLen+len(f.payload))
	buf[0] = f.kind
	binary.BigEndian.PutUint32(buf[1:5], f.call)
	binary.BigEndian.PutUint32(buf[5:9], uint32(len(f.payload))) // #nosec G115 -- at most maxPayload (1 MiB), checked above
	copy(buf[headerLen:], f.payload)
	_, err := w.Write(buf)
	return err
}

// readFrame reads the next frame. io.EOF means the stream ended cleanly
// between frames; a stream that ends inside one is io.ErrUnexpectedEOF.
func readFrame(r io.Reader) (frame, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(h[5:9])
	if n > maxPayload {
		return frame{}, fmt.Errorf("resident: frame of %d bytes exceeds %d", n, maxPayload)
	}
	f := frame{kind: h[0], call: binary.BigEndian.Uint32(h[1:5])}
	if n > 0 {
		f.payload = make([]byte, n)
		if _, err := io.ReadFull(r, f.payload); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return frame{}, err
		}
	}
	return f, nil
}

// hello is the resident's first frame.
type hello struct {
	Protocol int `json:"protocol"`
	PID      int `json:"pid"`
}

// startSpec is everything of a call but its stdin, which follows in
// stdin frames up to a stdin-end frame.
type startSpec struct {
	Command     string   `json:"command"`
	Args        []string `json:"args,omitempty"`
	Env         []string `json:"env,omitempty"` // KEY=value, over the resident's own
	StdinSize   int64    `json:"stdin_size"`
	TimeoutMS   int64    `json:"timeout_ms"` // a backstop: the client kills on its own deadline
	OutputLimit int      `json:"output_limit"`
}

// exitReport ends a call. Kind is empty for an exit status (Code, and
// Signal when a signal ended it); otherwise a sandbox.Kind name and Msg
// say why the call failed.
type exitReport struct {
	Code            int    `json:"code"`
	Signal          string `json:"signal,omitempty"`
	Kind            string `json:"kind,omitempty"`
	Msg             string `json:"msg,omitempty"`
	NotFound        bool   `json:"not_found,omitempty"` // with Kind start: no such command
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
}
