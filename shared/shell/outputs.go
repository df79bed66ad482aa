package shell

import (
	"io"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Outputs are one call's two capped streams: kept for the Response, or,
// for a streaming Spawn, passed to the caller's writers as they come.
type Outputs struct {
	Stdout, Stderr *Output
	streaming      bool
}

// NewOutputs caps each stream at limit. With stdout nil the output is
// kept for the Response; otherwise it goes to stdout and stderr (nil
// stderr discards).
func NewOutputs(limit int, stdout, stderr io.Writer) Outputs {
	if stdout == nil {
		return Outputs{Stdout: NewOutput(limit), Stderr: NewOutput(limit)}
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return Outputs{Stdout: NewStreamingOutput(limit, stdout), Stderr: NewStreamingOutput(limit, stderr), streaming: true}
}

// Fill puts the output, when kept, and the truncation flags into resp.
// Nothing may write to the streams any more.
func (o Outputs) Fill(resp *sandbox.Response) {
	if !o.streaming {
		resp.Stdout, resp.StdoutTruncated = o.Stdout.take()
		resp.Stderr, resp.StderrTruncated = o.Stderr.take()
		if len(resp.Stdout) == 0 {
			resp.Stdout = nil
		}
		if len(resp.Stderr) == 0 {
			resp.Stderr = nil
		}
		return
	}
	resp.StdoutTruncated, resp.StderrTruncated = o.Stdout.Truncated(), o.Stderr.Truncated()
}

// Streaming is the writer a streaming Spawn passes its output to: w, or
// io.Discard when the caller gave none (a nil stdout would mean "keep it"
// to NewOutputs).
func Streaming(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
