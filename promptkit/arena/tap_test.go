package arena_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
)

// tap is a loopback reverse proxy in front of one sandbox's MCP
// endpoint that keeps what the sandbox answered to the calls of the
// tools it watches, so that a test whose gate failed can show what the
// tool said, which arena's verdict does not carry. An answer may come
// as the body of the call's POST or as an event on a stream the client
// holds open: the tap reads both, and matches answers to calls by their
// JSON-RPC id.
type tap struct {
	url    string
	tools  []string
	srv    *http.Server
	served chan struct{}

	mu      sync.Mutex
	calls   map[string]string // JSON-RPC id → the tool called
	answers []string
}

// tapMaxAnswer bounds what a tap keeps of one answer.
const tapMaxAnswer = 4 << 10

// newTap starts a tap for the endpoint at target, watching the calls of
// the named tools.
func newTap(target string, tools ...string) (*tap, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("tap %s: %w", target, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tap %s: %w", target, err)
	}
	tp := &tap{url: "http://" + l.Addr().String() + u.Path, tools: tools, served: make(chan struct{}), calls: map[string]string{}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
			r.Out.Host = u.Host
		},
		// Answers may be event streams: pass each part on at once.
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			pr, pw := io.Pipe()
			body := resp.Body
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(body, pw), closerFunc(func() error {
				_ = pw.Close()
				return body.Close()
			})}
			go tp.scan(pr)
			return nil
		},
	}
	tp.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			tp.noteCall(body)
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() {
		defer close(tp.served)
		_ = tp.srv.Serve(l)
	}()
	return tp, nil
}

// rpcMessage is what the tap reads of a JSON-RPC message.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// noteCall remembers the id of a call of a watched tool.
func (tp *tap) noteCall(body []byte) {
	var m rpcMessage
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" || !slices.Contains(tp.tools, m.Params.Name) {
		return
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.calls[string(m.ID)] = m.Params.Name
}

// scan reads an answer, a JSON body or an event stream, keeping the
// messages that answer a watched call. It reads to the end, so the
// proxy never waits on it.
func (tp *tap) scan(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := bytes.TrimPrefix(sc.Bytes(), []byte("data: "))
		var m rpcMessage
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		tp.mu.Lock()
		if tool, ok := tp.calls[string(m.ID)]; ok {
			if len(line) > tapMaxAnswer {
				line = append(line[:tapMaxAnswer:tapMaxAnswer], "…"...)
			}
			tp.answers = append(tp.answers, tool+" (id "+string(m.ID)+"): "+string(line))
		}
		tp.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

// log writes what the tap kept into t's log, under the endpoint's name.
func (tp *tap) log(t *testing.T, endpoint string) {
	t.Helper()
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for _, a := range tp.answers {
		t.Logf("sandbox %s answered %s", endpoint, a)
	}
}

// close stops the tap; the calls through it are over by then.
func (tp *tap) close() {
	_ = tp.srv.Close()
	<-tp.served
}
