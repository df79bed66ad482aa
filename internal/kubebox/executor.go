package kubebox

import (
	"fmt"
	"net/url"
	"sync/atomic"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
)

// NewExecutor is the exec client for the exec URL u: WebSocket to the API
// server, falling back to SPDY for one that refuses the upgrade (before
// Kubernetes 1.30) or a proxy that cannot pass it. spdyOnly, when not
// nil, remembers a fallback, so that the next exec to the same server
// goes straight to SPDY rather than try the upgrade again.
func NewExecutor(cfg *rest.Config, u *url.URL, spdyOnly *atomic.Bool) (remotecommand.Executor, error) {
	spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
	if err != nil {
		return nil, fmt.Errorf("exec client: %w", err)
	}
	if spdyOnly != nil && spdyOnly.Load() {
		return spdy, nil
	}
	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		return nil, fmt.Errorf("exec client: %w", err)
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		if !httpstream.IsUpgradeFailure(err) && !httpstream.IsHTTPSProxyError(err) {
			return false
		}
		if spdyOnly != nil {
			spdyOnly.Store(true)
		}
		return true
	})
}
