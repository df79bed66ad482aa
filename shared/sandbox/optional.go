package sandbox

import (
	"context"
	"io"
)

// SpawnTo runs req in sb with the output written to stdout and stderr:
// as the process writes it when sb is a Streamer, all at once when Spawn
// returns otherwise. The Response carries no output, only the truncation
// flags and the error, as SpawnStreaming's does. It is the one place the
// Streamer capability is asked for, so every caller that passes output on
// streams wherever the backend can.
func SpawnTo(ctx context.Context, sb Sandbox, req Request, stdout, stderr io.Writer) (Response, error) {
	if st, ok := sb.(Streamer); ok {
		return st.SpawnStreaming(ctx, req, stdout, stderr)
	}
	resp, err := sb.Spawn(ctx, req)
	_, _ = stdout.Write(resp.Stdout)
	_, _ = stderr.Write(resp.Stderr)
	resp.Stdout, resp.Stderr = nil, nil
	return resp, err
}

// Close releases what sb holds when it is a Closer, and does nothing
// otherwise: whoever opened a sandbox calls it when done with it.
func Close(sb Sandbox) error {
	if c, ok := sb.(Closer); ok {
		return c.Close()
	}
	return nil
}
