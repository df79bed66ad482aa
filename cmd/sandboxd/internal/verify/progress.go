package verify

import (
	"bytes"
	"encoding/json"
	"strings"
)

// progressLine is a line of a step's output as a person would read it,
// for Request.Progress: go test -json's events give their output text
// (an event without any, such as "run" or "pass", gives nothing); other
// lines are passed as they are.
func progressLine(line []byte) (string, bool) {
	if !bytes.HasPrefix(line, []byte("{")) {
		return string(line), true
	}
	var ev testEvent
	if json.Unmarshal(line, &ev) != nil || ev.Action == "" {
		return string(line), true
	}
	text := strings.TrimRight(ev.Output, "\n")
	return text, text != ""
}
