package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// client is one running language server and what it has been told.
type client struct {
	spec    Spec
	ws      *workspace.Workspace
	proc    *shell.Process
	conn    *conn
	stdin   *io.PipeWriter
	stderr  *tail
	exited  chan struct{} // closed when the process is gone
	enc     Encoding
	started time.Time

	// qmu makes one question at a time: syncing the documents and
	// asking must not interleave with another question's.
	qmu   sync.Mutex
	docs  map[string]*doc      // open documents by path relative to the workspace
	files map[string]fileStamp // the watched files as last told, by relative path

	mu       sync.Mutex
	pending  map[string]bool // relative paths changed since the last question
	rescan   bool            // something may have changed files unseen (a shell)
	progress map[string]bool // work-done progress tokens begun and not ended
}

// errExited says the server process is gone; the next question starts
// a new one.
var errExited = errors.New("language server exited")

// start runs spec's server in ws with env and initializes it.
func start(ctx context.Context, spec Spec, ws *workspace.Workspace, opts Options) (*client, error) {
	bin, err := shell.LookPath(spec.Command, opts.Env)
	if err != nil {
		return nil, fmt.Errorf("%s language server: %w", spec.Language, err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{
		spec: spec, ws: ws, stdin: inW, stderr: newTail(4 << 10), exited: make(chan struct{}),
		started: time.Now(), docs: map[string]*doc{}, pending: map[string]bool{}, progress: map[string]bool{},
	}
	c.conn = newConn(inW, c.handle)
	c.conn.stuck, c.conn.stuckAfter = c.stopStuck, opts.Timeout
	env := append(withoutKey(opts.Env, "PWD"), "PWD="+ws.Dir())
	c.proc, err = shell.Start(context.Background(), sandbox.Request{Command: bin, Args: spec.Args, Env: env}, shell.Options{
		Dir:         ws.Dir(),
		Timeout:     -1, // it lives until stopped
		CleanEnv:    true,
		Credential:  opts.Credential,
		Isolated:    true,
		OutputLimit: math.MaxInt, // the protocol bounds messages itself
		StdoutSink:  outW,
		StderrSink:  c.stderr,
		StdinReader: inR,
	})
	if err != nil {
		_ = inW.Close()
		_ = outW.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Command, err)
	}
	go func() {
		_, _ = c.proc.Wait()
		outW.CloseWithError(errExited)
		_ = inR.CloseWithError(errExited)
		close(c.exited)
	}()
	go c.conn.read(outR)
	c.files = scan(ws, spec)
	if err := c.initialize(ctx); err != nil {
		c.stop()
		return nil, fmt.Errorf("start %s: %w", spec.Command, c.explain(err))
	}
	return c, nil
}

func withoutKey(env []string, key string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return out
}

// initialize is the handshake: what this client can do (UTF-8
// positions preferred), then the server's answer.
func (c *client) initialize(ctx context.Context) error {
	root := fileURI(c.ws.Dir())
	params := map[string]any{
		"processId":  os.Getpid(),
		"clientInfo": map[string]string{"name": "sandboxd"},
		"rootUri":    root,
		"rootPath":   c.ws.Dir(),
		"workspaceFolders": []map[string]string{
			{"uri": root, "name": filepath.Base(c.ws.Dir())},
		},
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": []Encoding{UTF8, UTF16}},
			"window":  map[string]any{"workDoneProgress": true},
			"workspace": map[string]any{
				"configuration":          true,
				"workspaceFolders":       true,
				"didChangeWatchedFiles":  map[string]any{"dynamicRegistration": true},
				"didChangeConfiguration": map[string]any{"dynamicRegistration": false},
			},
			"textDocument": map[string]any{
				"synchronization": map[string]any{"dynamicRegistration": false},
				"definition":      map[string]any{"linkSupport": true},
				"references":      map[string]any{},
				"rename":          map[string]any{"prepareSupport": false},
			},
		},
	}
	var result struct {
		Capabilities struct {
			PositionEncoding Encoding `json:"positionEncoding"`
		} `json:"capabilities"`
	}
	if err := c.conn.call(ctx, "initialize", params, &result); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	switch c.enc = result.Capabilities.PositionEncoding; c.enc {
	case UTF8, UTF16, UTF32:
	case "":
		c.enc = cmp.Or(c.spec.Encoding, UTF16)
	default:
		return fmt.Errorf("initialize: the server chose position encoding %q, which this client did not offer", c.enc)
	}
	if err := c.conn.notify("initialized", struct{}{}); err != nil {
		return err
	}
	if c.spec.Settings != nil {
		return c.conn.notify("workspace/didChangeConfiguration", map[string]any{"settings": c.spec.Settings})
	}
	return nil
}

// handle answers what the server asks of the client, and follows its
// progress. Anything else it asks gets "method not found" rather than
// silence, so it never waits on us.
func (c *client) handle(method string, params json.RawMessage) (any, error) {
	switch method {
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			if v, ok := c.spec.Settings[it.Section]; ok {
				out[i] = v
			}
		}
		return out, nil
	case "workspace/workspaceFolders":
		return []map[string]string{{"uri": fileURI(c.ws.Dir()), "name": filepath.Base(c.ws.Dir())}}, nil
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability",
		"window/showMessageRequest", "window/showDocument", "workspace/codeLens/refresh",
		"workspace/semanticTokens/refresh", "workspace/inlayHint/refresh", "workspace/diagnostic/refresh":
		return nil, nil
	case "workspace/applyEdit":
		// Edits reach the workspace through rename_symbol alone, which
		// checks and applies them itself.
		return map[string]any{"applied": false, "failureReason": "this client applies no edits the server starts"}, nil
	case "$/progress":
		c.noteProgress(params)
		return nil, nil
	}
	return nil, &RPCError{Code: codeMethodNotFound, Message: "method not supported by sandboxd: " + method}
}

// noteProgress tracks which work-done progress is under way: gopls
// reports loading the workspace so.
func (c *client) noteProgress(params json.RawMessage) {
	var p struct {
		Token json.RawMessage `json:"token"`
		Value struct {
			Kind string `json:"kind"`
		} `json:"value"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch p.Value.Kind {
	case "begin":
		c.progress[string(p.Token)] = true
	case "end":
		delete(c.progress, string(p.Token))
	}
}

// busy reports whether the server said it is working on something.
func (c *client) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.progress) > 0
}

// alive reports whether the process still runs.
func (c *client) alive() bool {
	select {
	case <-c.exited:
		return false
	case <-c.conn.done:
		return false
	default:
		return true
	}
}

// call is a request bounded by timeout; a server that died meanwhile is
// named with what it last wrote to stderr.
func (c *client) call(ctx context.Context, timeout time.Duration, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := c.conn.call(ctx, method, params, result)
	if errors.Is(err, context.DeadlineExceeded) {
		if time.Since(c.started) < 5*timeout {
			return fmt.Errorf("%s: the %s language server did not answer within %s; it may still be loading the project, so try again", method, c.spec.Language, timeout)
		}
		return fmt.Errorf("%s: the %s language server did not answer within %s", method, c.spec.Language, timeout)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", method, c.explain(err))
	}
	return nil
}

// explain adds the server's last words to an error that is its death.
func (c *client) explain(err error) error {
	if c.alive() {
		return err
	}
	msg := strings.TrimSpace(c.stderr.String())
	if msg == "" {
		return fmt.Errorf("%w (the next call starts it again)", errExited)
	}
	return fmt.Errorf("%w (the next call starts it again); it wrote: %s", errExited, msg)
}

// stopStuck ends a server that stopped reading its input.
func (c *client) stopStuck() {
	fmt.Fprintf(c.stderr, "\n[sandboxd stopped the server: it read no input for a whole request timeout]\n")
	c.proc.Stop()
}

// stop asks the server to shut down, briefly, then ends its whole
// process group either way.
func (c *client) stop() {
	if c.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if c.conn.call(ctx, "shutdown", nil, nil) == nil {
			_ = c.conn.notify("exit", nil)
		}
		cancel()
		select {
		case <-c.exited:
		case <-time.After(500 * time.Millisecond):
		}
	}
	c.proc.Stop()
	_, _ = c.proc.Wait()
	<-c.exited
	_ = c.stdin.Close()
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(n int) *tail { return &tail{max: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
