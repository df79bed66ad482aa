package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxMessage bounds one message from the server: a references answer on
// a large tree is a few MiB; beyond this the server is misbehaving.
const maxMessage = 64 << 20

// message is any JSON-RPC 2.0 message; which fields are set tells a
// request (method and id), a notification (method) and a response (id).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is an error response from the server.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// JSON-RPC error codes this client sends or recognises.
const (
	codeMethodNotFound   = -32601
	codeRequestCancelled = -32800
)

// handlerFunc answers a request from the server; notifications get the
// same call, and their answer is dropped.
type handlerFunc func(method string, params json.RawMessage) (any, error)

// conn is one JSON-RPC connection: requests out with their answers
// matched by id, requests and notifications in, handed to handle.
type conn struct {
	w      io.Writer
	handle handlerFunc
	// stuck, when set, is called when one write has been blocked for
	// stuckAfter: the server stopped reading, and only ending it frees
	// the writer (and every question queued behind it).
	stuck      func()
	stuckAfter time.Duration

	wmu sync.Mutex // one message at a time on w

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan *message
	err     error         // why the connection ended, once it has
	done    chan struct{} // closed when it ends
}

func newConn(w io.Writer, handle handlerFunc) *conn {
	return &conn{w: w, handle: handle, pending: map[int64]chan *message{}, done: make(chan struct{})}
}

// errClosed is the cause of a connection whose reader ended cleanly.
var errClosed = errors.New("language server closed its output")

// read reads messages from r until it fails, then fails every pending
// call with the reason.
func (c *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var m *message
		if m, err = readMessage(br); err != nil {
			break
		}
		c.dispatch(m)
	}
	if errors.Is(err, io.EOF) {
		err = errClosed
	}
	c.mu.Lock()
	c.err = err
	pending := c.pending
	c.pending = map[int64]chan *message{}
	c.mu.Unlock()
	close(c.done)
	for _, ch := range pending {
		close(ch)
	}
}

// readMessage reads one framed message: headers, a blank line, then
// Content-Length bytes of JSON.
func readMessage(br *bufio.Reader) (*message, error) {
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if len(line) > 1024 {
			return nil, errors.New("language server sent a header line over 1 KiB")
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("language server sent a malformed header %q", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("language server sent a bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("language server sent a message without Content-Length")
	}
	if length > maxMessage {
		return nil, fmt.Errorf("language server sent a message of %d bytes, over the %d limit", length, maxMessage)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, err
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("language server sent bad JSON: %w", err)
	}
	return &m, nil
}

// dispatch routes one incoming message. Requests from the server are
// answered on their own goroutine, so a slow handler cannot stall the
// answers the handler may itself be waiting for.
func (c *conn) dispatch(m *message) {
	switch {
	case m.Method == "" && len(m.ID) > 0:
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return // not one of ours: we only send integer ids
		}
		c.mu.Lock()
		ch, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ok {
			ch <- m
		}
	case len(m.ID) > 0:
		go func() {
			result, err := c.handle(m.Method, m.Params)
			reply := &message{JSONRPC: "2.0", ID: m.ID}
			if err != nil {
				var re *RPCError
				if !errors.As(err, &re) {
					re = &RPCError{Code: -32603, Message: err.Error()}
				}
				reply.Error = re
			} else {
				reply.Result, _ = json.Marshal(result)
			}
			_ = c.send(reply)
		}()
	default:
		_, _ = c.handle(m.Method, m.Params)
	}
}

// send writes one framed message.
func (c *conn) send(m *message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.stuck != nil {
		t := time.AfterFunc(c.stuckAfter, c.stuck)
		defer t.Stop()
	}
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		return fmt.Errorf("write to language server: %w", err)
	}
	return nil
}

// Notify sends a notification.
func (c *conn) notify(method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	return c.send(&message{JSONRPC: "2.0", Method: method, Params: raw})
}

// call sends a request and waits for its answer, decoded into result
// (when not nil), or for ctx to end, which cancels the request.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(&message{JSONRPC: "2.0", ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: raw}); err != nil {
		c.forget(id)
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return c.cause()
		}
		if m.Error != nil {
			return m.Error
		}
		if result == nil || len(m.Result) == 0 {
			return nil
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("%s: decode the answer: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		_ = c.notify("$/cancelRequest", map[string]int64{"id": id})
		return ctx.Err()
	}
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// cause is why the connection ended.
func (c *conn) cause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return errClosed
	}
	return c.err
}

// marshalParams encodes params; nil leaves them out, as methods without
// parameters (shutdown, exit) want.
func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	return json.Marshal(params)
}
