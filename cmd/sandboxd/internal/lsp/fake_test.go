package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// fakeEnv makes the test binary a language server (see TestMain).
const fakeEnv = "LSP_TEST_FAKE_SERVER"

func TestMain(m *testing.M) {
	// Language servers run contained, by starts of this binary.
	supervisor.Init()
	if os.Getenv(fakeEnv) != "" {
		os.Exit(fakeServe())
	}
	os.Exit(m.Run())
}

// fakeServe is a language server that, asked to rename, first asks the
// client what a server may ask (and something no client knows), then
// answers with an edit inside the workspace and one outside it, named
// by its environment.
func fakeServe() int {
	in := bufio.NewReader(os.Stdin)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Printf("Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	for {
		m, err := readMessage(in)
		if err != nil {
			return 0
		}
		switch m.Method {
		case "initialize":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"capabilities": map[string]any{"positionEncoding": "utf-8"}}})
		case "shutdown":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
		case "exit":
			return 0
		case "textDocument/rename":
			answers := map[string]string{}
			for i, method := range []string{"workspace/applyEdit", "workspace/configuration", "window/workDoneProgress/create", "fake/unknown"} {
				send(map[string]any{"jsonrpc": "2.0", "id": i + 100, "method": method, "params": map[string]any{"items": []any{map[string]any{}}}})
			}
			for len(answers) < 4 {
				a, err := readMessage(in)
				if err != nil {
					return 1
				}
				if a.Error != nil {
					answers[string(a.ID)] = fmt.Sprint(a.Error.Code)
				} else {
					answers[string(a.ID)] = string(a.Result)
				}
			}
			want := map[string]string{"100": `{"applied":false,"failureReason":"this client applies no edits the server starts"}`, "101": "[null]", "102": "null", "103": "-32601"}
			if fmt.Sprint(answers) != fmt.Sprint(want) {
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": 1, "message": fmt.Sprintf("client answered %v", answers)}})
				continue
			}
			var p struct {
				TextDocument textDocumentID `json:"textDocument"`
			}
			_ = json.Unmarshal(m.Params, &p)
			edit := []textEdit{{Range{Position{0, 4}, Position{0, 7}}, "Bar"}}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": workspaceEdit{Changes: map[string][]textEdit{
				p.TextDocument.URI:                 edit,
				fileURI(os.Getenv("FAKE_OUTSIDE")): edit,
			}}})
		default:
			if len(m.ID) > 0 {
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
			}
		}
	}
}

// TestRenameRefusesEditsOutside: a rename whose edit reaches outside the
// workspace plans nothing, after the server's own requests were all
// answered; an idle server is stopped.
func TestRenameRefusesEditsOutside(t *testing.T) {
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "victim.fk")
	for _, f := range []string{filepath.Join(dir, "a.fk"), outside} {
		if err := os.WriteFile(f, []byte("let Foo = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	m := New(ws, Options{
		Env:         []string{fakeEnv + "=1", "FAKE_OUTSIDE=" + outside},
		Specs:       []Spec{{Language: "fake", Command: os.Args[0], Extensions: []string{".fk"}}},
		Timeout:     10 * time.Second,
		IdleTimeout: 300 * time.Millisecond,
	})
	defer m.Close()
	_, err = m.Rename(context.Background(), Query{File: "a.fk", Symbol: "Foo"}, "Bar")
	if err == nil || !strings.Contains(err.Error(), "victim.fk, outside the workspace; nothing was changed") {
		t.Fatalf("Rename = %v", err)
	}
	if len(m.Running()) != 1 {
		t.Fatalf("running after the question: %v", m.Running())
	}
	for deadline := time.Now().Add(5 * time.Second); len(m.Running()) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still running after the idle timeout: %v", m.Running())
		}
	}
}
