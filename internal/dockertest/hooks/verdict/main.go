// Command verdict is a filter hook: it reads a PromptKit hook request (a
// JSON object) on stdin and allows it, unless the request contains the
// string "deny-me", which it denies. Input that is not a JSON object makes it
// fail with exit status 2 and a message on stderr, as a real hook would.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verdict: reading stdin:", err)
		os.Exit(2)
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(in, &req); err != nil {
		fmt.Fprintln(os.Stderr, "verdict: stdin is not a JSON hook request:", err)
		os.Exit(2)
	}
	if bytes.Contains(in, []byte("deny-me")) {
		fmt.Println(`{"allow": false, "reason": "request contains deny-me"}`)
		return
	}
	fmt.Println(`{"allow": true}`)
}
