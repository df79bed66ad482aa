package dockerbox

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/altairalabs/promptkit-sandbox/internal/egress"
)

// A sandbox with egress rules keeps a network of loopback alone: its way
// out is a proxy this plugin runs for it, listening on a socket in the
// sandbox's private directory, which is mounted into the container.
// sandboxd relays a loopback port to that socket (--egress-socket) and
// points the agent's commands at it. The proxy holds the policy and the
// credentials; nothing of either is inside the sandbox.
const (
	egressSocketName = "egress.sock"
	egressCAName     = "egress-ca.pem"
)

// egressDial and egressRoots are how proxies reach upstreams: nil, the
// egress package's defaults (public addresses only, the system's roots).
// Tests point them at upstreams of their own on loopback.
var (
	egressDial  func(ctx context.Context, network, addr string) (net.Conn, error)
	egressRoots *x509.CertPool
)

// startEgress starts b's egress proxy on its socket. When a rule adds a
// credential (injects), the proxy answers for that host itself, with a
// certificate of a CA of its own: the bundle the sandbox then trusts
// (the public roots and that CA) is written beside the socket.
func (p *CodegenProvider) startEgress(b *codegenBox, name string, rules []egress.Rule) error {
	px, err := egress.New(egress.Options{
		Name: name, Rules: rules, Secret: os.LookupEnv, Dial: egressDial, UpstreamRoots: egressRoots,
		Log: p.log.Named("egress").With("sandbox", name),
	})
	if err != nil {
		return err
	}
	path := filepath.Join(b.dir.run, egressSocketName)
	ln, err := net.Listen("unix", path)
	if err != nil {
		_ = px.Close()
		return fmt.Errorf("egress proxy: %w", err)
	}
	// The sandbox's user is not the plugin's; the directory around the
	// socket is the sandbox's alone.
	if err := os.Chmod(path, 0o666); err != nil { // #nosec G302 -- in the sandbox's private 0700 directory; the proxy enforces the policy
		_ = ln.Close()
		_ = px.Close()
		return fmt.Errorf("egress proxy: %w", err)
	}
	b.egress = px
	go func() { _ = px.Serve(ln) }()
	if !egress.Injects(rules) {
		return nil
	}
	// #nosec G306 -- certificates, public by nature; the sandbox's user reads them
	if err := os.WriteFile(filepath.Join(b.dir.run, egressCAName), px.TrustBundle(), 0o644); err != nil {
		return fmt.Errorf("egress proxy: write the CA bundle: %w", err)
	}
	return nil
}

// egressArgs are sandboxd's flags for the proxy's socket and bundle.
func (h Hardening) egressArgs(caBundle bool) []string {
	args := []string{"--egress-socket", h.SocketDir + "/" + egressSocketName}
	if caBundle {
		args = append(args, "--egress-ca", h.SocketDir+"/"+egressCAName)
	}
	return args
}
