package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/telemetry"
)

// pathMetrics is where the metrics listener serves the scrape.
const pathMetrics = "/metrics"

// metricsServer serves the Prometheus metrics on a listener of their
// own, apart from MCP: no token, no Origin or Host check, since a scrape
// reads counters and nothing else, and a scraper has no token to give.
type metricsServer struct {
	ln   net.Listener
	http *http.Server
	done chan struct{}
}

// serveMetrics listens on addr (HOST:PORT or unix:PATH) and serves m at
// /metrics until stop.
func serveMetrics(addr string, m *telemetry.Metrics, log *slog.Logger) (*metricsServer, error) {
	ln, err := listen(addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(pathMetrics, m.Handler())
	ms := &metricsServer{
		ln:   ln,
		http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		defer close(ms.done)
		if err := ms.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener failed", "addr", addr, "err", err)
		}
	}()
	return ms, nil
}

// url is where a scraper finds the metrics.
func (ms *metricsServer) url() string { return listenURL(ms.ln) + pathMetrics }

// stop closes the listener, letting a scrape in progress finish briefly.
func (ms *metricsServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := ms.http.Shutdown(ctx); err != nil {
		_ = ms.http.Close()
	}
	<-ms.done
}
