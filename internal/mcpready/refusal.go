package mcpready

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// RefusedCode is the JSON-RPC error code of a call Refusal answers: in
// the range JSON-RPC leaves to servers.
const RefusedCode = -32001

// Refusal answers an HTTP request to sandboxd's endpoint that sandboxd
// cannot take (its container is paused) with 409 Conflict and msg: as
// the JSON-RPC error of the request's id when the body is a JSON-RPC
// request, so that an MCP client reports msg as that call's error and
// keeps its session; as plain text otherwise.
func Refusal(msg string) func(request []byte) []byte {
	return func(request []byte) []byte {
		body, ctype := []byte(msg+"\n"), "text/plain; charset=utf-8"
		if id, ok := requestID(request); ok {
			body, _ = json.Marshal(map[string]any{
				"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": RefusedCode, "message": msg},
			})
			ctype = "application/json"
		}
		return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			http.StatusConflict, http.StatusText(http.StatusConflict), ctype, len(body), body)
	}
}

// requestID is the id of the JSON-RPC request in an HTTP request's body.
func requestID(request []byte) (json.RawMessage, bool) {
	_, body, ok := bytes.Cut(request, []byte("\r\n\r\n"))
	if !ok {
		return nil, false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == "" || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return nil, false
	}
	return msg.ID, true
}
