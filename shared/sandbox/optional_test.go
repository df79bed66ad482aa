package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

type plain struct{ closed int }

func (*plain) Name() string { return "plain" }
func (*plain) Spawn(context.Context, Request) (Response, error) {
	return Response{Stdout: []byte("out"), Stderr: []byte("err"), StdoutTruncated: true}, errors.New("failed")
}

type streaming struct{ plain }

func (*streaming) SpawnStreaming(_ context.Context, _ Request, stdout, stderr io.Writer) (Response, error) {
	_, _ = stdout.Write([]byte("streamed"))
	_, _ = stderr.Write([]byte("streamed err"))
	return Response{StderrTruncated: true}, nil
}

func (p *plain) Close() error { p.closed++; return nil }

// SpawnTo writes a plain sandbox's output once it returns, and leaves
// none in the Response, as a Streamer's.
func TestSpawnToPlain(t *testing.T) {
	var out, errs bytes.Buffer
	resp, err := SpawnTo(context.Background(), &plain{}, Request{}, &out, &errs)
	if err == nil || err.Error() != "failed" || resp.Stdout != nil || resp.Stderr != nil || !resp.StdoutTruncated {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if out.String() != "out" || errs.String() != "err" {
		t.Fatalf("stdout %q stderr %q", out.String(), errs.String())
	}
}

func TestSpawnToStreamer(t *testing.T) {
	var out, errs bytes.Buffer
	resp, err := SpawnTo(context.Background(), &streaming{}, Request{}, &out, &errs)
	if err != nil || !resp.StderrTruncated || out.String() != "streamed" || errs.String() != "streamed err" {
		t.Fatalf("resp %+v err %v stdout %q stderr %q", resp, err, out.String(), errs.String())
	}
}

type noClose struct{}

func (noClose) Name() string                                     { return "n" }
func (noClose) Spawn(context.Context, Request) (Response, error) { return Response{}, nil }

func TestClose(t *testing.T) {
	p := &plain{}
	if err := Close(p); err != nil || p.closed != 1 {
		t.Fatalf("Close of a Closer: %v, closed %d times", err, p.closed)
	}
	if err := Close(noClose{}); err != nil {
		t.Fatalf("Close of a sandbox that holds nothing: %v", err)
	}
}
