package main

import (
	"errors"
	"fmt"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/server"
	"github.com/altairalabs/promptkit-sandbox/internal/egresstunnel"
	"github.com/altairalabs/promptkit-sandbox/internal/loopback"
)

// The egress relay is the sandbox's end of its one way out. A sandbox
// with an egress policy has no network but loopback; its provider's
// proxy, which holds the policy and the credentials, listens on a unix
// socket mounted into the sandbox. Package managers and HTTP clients
// speak to an HTTP proxy over TCP, not to a socket file, so sandboxd
// listens on a loopback port and carries each connection to the socket,
// byte for byte: it decides nothing, the proxy does.
//
// On Kubernetes the sandbox cannot reach its provider at all, not even a
// socket: the provider dials in instead, to --egress-tunnel, and the relay
// carries each connection over that tunnel (package egresstunnel). The
// provider authenticates with sandboxd's own token.

// errEgressBoth: a relay has one way out.
var errEgressBoth = errors.New("give --egress-socket or --egress-tunnel, not both")

// DefaultEgressListen is where the relay listens by default: the port
// squid made the usual one for a proxy.
const DefaultEgressListen = "127.0.0.1:3128"

// egressEnv is what the agent's commands get so that their HTTP clients
// use the relay: the usual proxy variables in both cases (curl reads
// only the lower-case http_proxy), loopback left direct, and, when the
// proxy intercepts TLS for hosts whose requests it adds credentials to,
// the bundle that trusts it, under each toolchain's name for it.
func egressEnv(listen, caBundle string) []string {
	url := "http://" + listen
	env := []string{
		"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
	}
	if caBundle != "" {
		for _, name := range []string{"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "PIP_CERT",
			"CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "CARGO_HTTP_CAINFO"} {
			env = append(env, name+"="+caBundle)
		}
	}
	return env
}

// startEgressRelay forwards listen, which must be loopback, to the
// proxy's socket: the relay is for the sandbox's own processes, never for
// anyone who can reach the sandbox's network. A connection the proxy
// does not take is closed.
func startEgressRelay(listen, socket string) (*loopback.Forwarder, error) {
	return relayTo(listen, loopback.Unix(socket))
}

// startEgressTunnel listens on addr for the provider's tunnel, which
// must greet it with token, and forwards listen (loopback) through it. A
// connection made while no provider is connected waits for one, as long
// as the relay waits for any upstream (loopback.DialTimeout), then is
// closed. Beyond loopback the tunnel wants a token as --addr does: one
// given, and long.
func startEgressTunnel(listen, addr, token string, generated bool) (*loopback.Forwarder, *egresstunnel.Tunnel, error) {
	if err := checkExposure(addr, false, token, generated); err != nil {
		return nil, nil, fmt.Errorf("--egress-tunnel %s: %w", addr, err)
	}
	if !server.LoopbackAddr(listen) { // before anything listens
		return nil, nil, fmt.Errorf("--egress-listen %s: want a loopback address such as %s", listen, DefaultEgressListen)
	}
	t, err := egresstunnel.Listen(addr, token)
	if err != nil {
		return nil, nil, fmt.Errorf("--egress-tunnel %s: %w", addr, err)
	}
	f, err := relayTo(listen, t.Open)
	if err != nil {
		_ = t.Close()
		return nil, nil, err
	}
	return f, t, nil
}

func relayTo(listen string, upstream loopback.Dial) (*loopback.Forwarder, error) {
	if !server.LoopbackAddr(listen) {
		return nil, fmt.Errorf("--egress-listen %s: want a loopback address such as %s", listen, DefaultEgressListen)
	}
	f, err := loopback.Listen(listen, upstream)
	if err != nil {
		return nil, fmt.Errorf("egress relay: %w", err)
	}
	return f, nil
}
