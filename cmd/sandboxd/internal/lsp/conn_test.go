package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeServer is the other end of a conn: it reads what the client sends
// and writes what the test scripts.
type fakeServer struct {
	in  *bufio.Reader
	out io.Writer
}

func (f fakeServer) read(t *testing.T) *message {
	t.Helper()
	m, err := readMessage(f.in)
	if err != nil {
		t.Fatalf("server read: %v", err)
	}
	return m
}

func (f fakeServer) write(t *testing.T, body string) {
	t.Helper()
	if _, err := io.WriteString(f.out, "Content-Length: "+itoa(len(body))+"\r\n\r\n"+body); err != nil {
		t.Fatalf("server write: %v", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func pair(t *testing.T, handle handlerFunc) (*conn, fakeServer, func()) {
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	c := newConn(toServerW, handle)
	go c.read(toClientR)
	return c, fakeServer{bufio.NewReader(toServerR), toClientW}, func() { toClientW.Close(); toServerR.Close() }
}

// TestConnAnswersServerRequestsWhileWaiting: a call whose answer comes
// only after the server asked the client something (as gopls asks for
// its configuration) completes, and the server's request is answered.
func TestConnAnswersServerRequestsWhileWaiting(t *testing.T) {
	c, srv, done := pair(t, func(method string, _ json.RawMessage) (any, error) {
		if method == "workspace/configuration" {
			return []any{nil}, nil
		}
		return nil, &RPCError{Code: codeMethodNotFound, Message: "no " + method}
	})
	defer done()
	res := make(chan error, 1)
	var got []string
	go func() { res <- c.call(context.Background(), "test/ask", map[string]int{"n": 1}, &got) }()
	req := srv.read(t)
	if req.Method != "test/ask" || string(req.Params) != `{"n":1}` {
		t.Fatalf("request = %+v", req)
	}
	srv.write(t, `{"jsonrpc":"2.0","id":"s1","method":"workspace/configuration","params":{"items":[{}]}}`)
	srv.write(t, `{"jsonrpc":"2.0","id":"s2","method":"unknown/thing"}`)
	answers := map[string]string{}
	for range 2 {
		m := srv.read(t)
		if m.Error != nil {
			answers[string(m.ID)] = m.Error.Message
		} else {
			answers[string(m.ID)] = string(m.Result)
		}
	}
	if answers[`"s1"`] != "[null]" || answers[`"s2"`] != "no unknown/thing" {
		t.Fatalf("answers to the server = %v", answers)
	}
	srv.write(t, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":["a","b"]}`)
	if err := <-res; err != nil || strings.Join(got, ",") != "a,b" {
		t.Fatalf("call = %v, %v", got, err)
	}
}

// TestConnCancelsAndFails: a call whose context ends sends
// $/cancelRequest; a server that goes away fails the calls in flight.
func TestConnCancelsAndFails(t *testing.T) {
	c, srv, done := pair(t, func(string, json.RawMessage) (any, error) { return nil, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := make(chan error, 1)
	go func() { res <- c.call(ctx, "slow", nil, nil) }()
	req := srv.read(t)
	if req.Params != nil {
		t.Errorf("params of a call without them: %s", req.Params)
	}
	if m := srv.read(t); m.Method != "$/cancelRequest" || string(m.Params) != `{"id":`+string(req.ID)+`}` {
		t.Fatalf("after the deadline the server got %+v", m)
	}
	if err := <-res; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call = %v", err)
	}
	go func() { res <- c.call(context.Background(), "never", nil, nil) }()
	srv.read(t)
	done()
	if err := <-res; !errors.Is(err, errClosed) {
		t.Fatalf("call to a server that closed = %v", err)
	}
}

// TestConnStuckWriter: a write the server never reads calls stuck, whose
// ending of the server frees the writer.
func TestConnStuckWriter(t *testing.T) {
	r, w := io.Pipe()
	c := newConn(w, nil)
	called := make(chan struct{})
	c.stuck, c.stuckAfter = func() { close(called); r.CloseWithError(errors.New("server ended")) }, 50*time.Millisecond
	if err := c.notify("textDocument/didChange", map[string]string{"text": "x"}); err == nil || !strings.Contains(err.Error(), "server ended") {
		t.Fatalf("notify to a server that reads nothing = %v", err)
	}
	<-called
}
