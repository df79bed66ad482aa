// Command verdict is a filter hook: it reads a PromptKit hook request (a
// JSON object) on stdin and allows it, unless the request contains one of
// these words, which pick what it does instead:
//
//	deny-me     deny, with a reason
//	meta-me     deny, with a reason and metadata
//	garbage-me  write a verdict that is not JSON, and exit 0
//	fail-me     write to stderr and exit with status 3
//	sleep-me    sleep a minute (a hook that times out)
//
// Input that is not a JSON object makes it fail with exit status 2 and a
// message on stderr, as a real hook would. When VERDICT_LOG names a file,
// each call first appends "HOOK PHASE" to it, so an observe hook's run
// can be seen.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verdict: reading stdin:", err)
		os.Exit(2)
	}
	var req struct {
		Hook  string `json:"hook"`
		Phase string `json:"phase"`
	}
	if err := json.Unmarshal(in, &req); err != nil {
		fmt.Fprintln(os.Stderr, "verdict: stdin is not a JSON hook request:", err)
		os.Exit(2)
	}
	if path := os.Getenv("VERDICT_LOG"); path != "" {
		if err := appendLine(path, req.Hook+" "+req.Phase); err != nil {
			fmt.Fprintln(os.Stderr, "verdict:", err)
			os.Exit(2)
		}
	}
	switch {
	case bytes.Contains(in, []byte("deny-me")):
		fmt.Println(`{"allow": false, "reason": "request contains deny-me"}`)
	case bytes.Contains(in, []byte("meta-me")):
		fmt.Println(`{"allow": false, "reason": "request contains meta-me", "metadata": {"rule": "meta", "score": 0.5}}`)
	case bytes.Contains(in, []byte("garbage-me")):
		fmt.Println(`this is not a verdict`)
	case bytes.Contains(in, []byte("fail-me")):
		fmt.Fprintln(os.Stderr, "verdict: failing on purpose")
		os.Exit(3)
	case bytes.Contains(in, []byte("sleep-me")):
		time.Sleep(time.Minute)
		fmt.Println(`{"allow": true}`)
	default:
		fmt.Println(`{"allow": true}`)
	}
}

func appendLine(path, line string) error {
	// #nosec G302 G304 G703 -- a test hook's log at the path its test sets (VERDICT_LOG), in a throwaway test container where the hook may run as any user
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
