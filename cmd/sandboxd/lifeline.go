package main

import (
	"context"
	"io"
	"log/slog"
)

// stdinLifeline returns a context that ends with ctx or when stdin ends,
// whichever is first. A provider that starts sandboxd in a container
// holds the container's stdin open (an attach with StdinOnce); when the
// provider's process dies, however it dies, the engine closes that stdin
// and sandboxd shuts down as on SIGTERM, so the container does not
// outlive what hands out its endpoint.
func stdinLifeline(ctx context.Context, stdin io.Reader, log *slog.Logger) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		_, err := io.Copy(io.Discard, stdin)
		if ctx.Err() == nil {
			log.Info("stdin ended (--exit-on-stdin-eof): shutting down", "error", err)
		}
	}()
	return ctx
}
