package kubecodegen

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/egress"
	"github.com/altairalabs/promptkit-sandbox/internal/egresstunnel"
)

// A sandbox with egress rules keeps network: none, so its Pod can dial
// nothing, not even this plugin. Its way out is a proxy this plugin runs
// for it, as docker_codegen does, reached the other way round: the
// plugin dials sandboxd's tunnel port through the Service (ingress,
// which the NetworkPolicy admits), authenticates with the sandbox's
// token, and serves the proxy on the streams sandboxd opens on that
// connection, one per connection an agent's process makes to the relay
// at 127.0.0.1:3128 (internal/egresstunnel). The proxy holds the policy
// and the credentials; nothing of either is in the Pod or the cluster.

// egressCAKey is the Secret's key, and the file's name in tokenDir, of
// the bundle the sandbox trusts when the proxy intercepts some hosts:
// the path docker_codegen mounts it at.
const egressCAKey = "egress-ca.pem"

// egressDial and egressRoots are how proxies reach upstreams: nil, the
// egress package's defaults (public addresses only, the system's roots).
// Tests point them at upstreams of their own on loopback.
var (
	egressDial  func(ctx context.Context, network, addr string) (net.Conn, error)
	egressRoots *x509.CertPool
)

// Bounds of the tunnel's dials: each, and the pause between failed ones
// (a Pod not up yet, paused, or made anew by a Resume).
const (
	tunnelDialTimeout = 5 * time.Second
	tunnelRetryMin    = 100 * time.Millisecond
	tunnelRetryMax    = 2 * time.Second
)

// newEgressProxy is the proxy of a sandbox named name.
func (p *Provider) newEgressProxy(name string, rules []egress.Rule) (*egress.Proxy, error) {
	return egress.New(egress.Options{
		Name: name, Rules: rules, Secret: os.LookupEnv, Dial: egressDial, UpstreamRoots: egressRoots,
		Log: p.log.Named("egress").With("sandbox", name),
	})
}

// caBundle is what the Secret carries for the sandbox to trust: nothing
// unless a rule adds a credential.
func (b *box) caBundle() []byte {
	if b.egress == nil || !egress.Injects(b.o.set.egress) {
		return nil
	}
	return b.egress.TrustBundle()
}

// keepTunnel holds the tunnel to sandboxd at svcIP, serving the proxy
// on each session, and dials again when one ends, until ctx ends.
func (b *box) keepTunnel(ctx context.Context, svcIP, token string) {
	defer close(b.tunnelDone)
	addr := net.JoinHostPort(svcIP, strconv.Itoa(egresstunnel.Port))
	wait := tunnelRetryMin
	for ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(ctx, tunnelDialTimeout)
		sess, err := egresstunnel.Dial(dctx, addr, token)
		cancel()
		if err == nil {
			wait = tunnelRetryMin
			b.log.Debug("egress tunnel up", "id", b.o.id)
			if err := b.egress.Serve(sess); err != nil && ctx.Err() == nil {
				b.log.Debug("egress tunnel down", "id", b.o.id, "error", err)
			}
			continue
		}
		var refused *egresstunnel.RefusedError
		if errors.As(err, &refused) {
			b.log.Warn("egress tunnel refused", "id", b.o.id, "error", err)
		} else {
			b.log.Debug("egress tunnel not up", "id", b.o.id, "error", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, tunnelRetryMax)
	}
}

// stopEgress ends the tunnel and the proxy, and waits for the tunnel's
// goroutine.
func (b *box) stopEgress() {
	if b.egress == nil {
		return
	}
	if b.stopTunnel != nil {
		b.stopTunnel()
	}
	_ = b.egress.Close()
	if b.tunnelDone != nil {
		<-b.tunnelDone
	}
}
