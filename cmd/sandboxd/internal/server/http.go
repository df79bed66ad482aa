package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// The HTTP paths sandboxd serves.
const (
	PathMCP     = "/mcp"
	PathSSE     = "/sse"
	PathMessage = "/message"
	// PathHealth answers 200 "ok" to any GET or HEAD, without a token,
	// for liveness probes and providers waiting for sandboxd to come up.
	PathHealth = "/healthz"
)

// sessionProtocols are the MCP revisions sandboxd speaks over Streamable
// HTTP: those with protocol sessions. Read-before-write is tracked per
// session, and the stateless 2026-07-28 core has none, so a client that
// offers it is steered to the newest session-oriented revision.
var sessionProtocols = []string{
	mcp.ProtocolVersion20251125,
	mcp.ProtocolVersion20250618,
	mcp.ProtocolVersion20250326,
	mcp.ProtocolVersion20241105,
}

// HTTP serves the MCP endpoints on one listener behind the gate.
type HTTP struct {
	srv        *Server
	streamable *mcpserver.StreamableHTTPServer
	sse        *mcpserver.SSEServer
	http       *http.Server
}

// NewHTTP builds the HTTP front for s. loopback says whether the listener
// is bound to loopback only (the Host check applies then).
func (s *Server) NewHTTP(loopback bool) *HTTP {
	h := &HTTP{srv: s}
	h.streamable = mcpserver.NewStreamableHTTPServer(s.mcp,
		mcpserver.WithEndpointPath(PathMCP),
		mcpserver.WithSessionIdleTTL(sessionIdleTTL),
		mcpserver.WithStreamableHTTPLogger(s.log),
		mcpserver.WithStreamableHTTPProtocolVersions(sessionProtocols...),
	)
	sseOpts := []mcpserver.SSEOption{
		mcpserver.WithSSEEndpoint(PathSSE),
		mcpserver.WithMessageEndpoint(PathMessage),
		mcpserver.WithUseFullURLForMessageEndpoint(false),
		mcpserver.WithKeepAlive(true),
	}
	if len(s.cfg.AllowedOrigins) > 0 {
		// Without a CORS configuration of its own mcp-go answers the SSE
		// stream with Allow-Origin "*", over the origin the gate set. The
		// gate has refused every other origin by then; this keeps the
		// stream's answer naming the one it let through.
		sseOpts = append(sseOpts, mcpserver.WithSSECORS(mcpserver.WithCORSAllowedOrigins(s.cfg.AllowedOrigins...)))
	}
	h.sse = mcpserver.NewSSEServer(s.mcp, sseOpts...)
	mux := http.NewServeMux()
	mux.Handle(PathMCP, h.streamable)
	// The base URL too, and only it ("/{$}": other paths are still 404),
	// behind the same gate: PromptKit's Streamable HTTP client posts to
	// the URL it is given as is, while its SSE client adds /sse to the
	// same URL, so one URL serves both.
	mux.Handle("/{$}", h.streamable)
	mux.Handle(PathSSE, h.sse.SSEHandler())
	mux.Handle(PathMessage, h.sse.MessageHandler())
	gate := Gate{
		Token:          s.cfg.Token,
		AllowedOrigins: s.cfg.AllowedOrigins,
		MaxBody:        s.cfg.MaxBody,
		Loopback:       loopback,
	}
	// The health check stands before the gate: a probe carries no token,
	// and "ok" tells it nothing else.
	gated := gate.Wrap(mux)
	front := s.tel.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == PathHealth {
			health(w, r)
			return
		}
		gated.ServeHTTP(w, r)
	}))
	h.http = &http.Server{
		Handler:           front,
		ReadHeaderTimeout: 10 * time.Second,
		// No WriteTimeout: SSE streams and long Bash calls write late.
		IdleTimeout: 5 * time.Minute,
	}
	return h
}

// health answers a liveness probe: the process is up and serving HTTP.
func health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, "ok\n")
}

// Handler is the gated mux, for tests and embedding.
func (h *HTTP) Handler() http.Handler { return h.http.Handler }

// Serve serves on ln until Shutdown; it returns nil after a shutdown.
func (h *HTTP) Serve(ln net.Listener) error {
	err := h.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops taking calls, lets those in flight finish within the
// server's grace and cancels the rest, kills every shell, then closes the
// connections (SSE streams included, which would otherwise hold
// http.Server.Shutdown open).
func (h *HTTP) Shutdown(ctx context.Context) error {
	clean := h.srv.calls.drain(h.srv.cfg.ShutdownGrace)
	h.sse.CloseSessions()
	h.streamable.CloseSessions(ctx)
	// Idle and finished connections go now; open streams are cut.
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := h.http.Shutdown(sctx); err != nil {
		_ = h.http.Close()
	}
	err := h.srv.Close()
	if !clean {
		return errors.Join(fmt.Errorf("some tool calls did not return within the shutdown grace"), err)
	}
	return err
}

// ServeStdio serves MCP over in and out until in ends or ctx is done,
// then shuts down as Shutdown does.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	stdio := mcpserver.NewStdioServer(s.mcp)
	err := stdio.Listen(ctx, in, out)
	s.calls.drain(s.cfg.ShutdownGrace)
	if cerr := s.Close(); err == nil || errors.Is(err, context.Canceled) {
		err = cerr
	}
	return err
}
