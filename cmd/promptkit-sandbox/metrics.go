package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/altairalabs/promptkit-sandbox/hooks/metrics"
)

// pathMetrics is where the metrics listener serves.
const pathMetrics = "/metrics"

// metricsListenAddr is the address --metrics-addr listens on: HOST:PORT
// as given, and a bare PORT or :PORT on the loopback interface, so that
// nothing is exposed beyond this host unless a host is named.
func metricsListenAddr(addr string) (string, error) {
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", addr), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--metrics-addr %q: want HOST:PORT, :PORT or PORT", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// metricsServer serves the hook metrics of one serve, with the Go runtime
// and process collectors, on a listener of its own.
type metricsServer struct {
	reg  *prometheus.Registry
	ln   net.Listener
	http *http.Server
	done chan struct{}
}

// serveMetrics starts serving m at addr (see metricsListenAddr).
func serveMetrics(addr string, m *metrics.Collector, log hclog.Logger) (*metricsServer, error) {
	listen, err := metricsListenAddr(addr)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(m); err != nil {
		return nil, err
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(pathMetrics, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	ms := &metricsServer{reg: reg, ln: ln, http: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(ms.done)
		if err := ms.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener failed", "addr", ln.Addr().String(), "error", err)
		}
	}()
	return ms, nil
}

// url is where a scraper finds the metrics.
func (ms *metricsServer) url() string { return "http://" + ms.ln.Addr().String() + pathMetrics }

// stop closes the listener, letting a scrape in progress finish briefly.
func (ms *metricsServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := ms.http.Shutdown(ctx); err != nil {
		_ = ms.http.Close()
	}
	<-ms.done
}
