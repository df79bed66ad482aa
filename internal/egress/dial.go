package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// publicDialer dials upstreams, refusing the addresses a name should
// not lead a sandbox to through the host: loopback (the host's own
// services), link-local (cloud metadata at 169.254.169.254) and
// unspecified. The check runs on the address actually dialled, after
// DNS, so a name that resolves there is refused too.
func publicDialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: dialTimeout, Control: refuseLocal}
	return d.DialContext
}

// refuseLocal is a net.Dialer Control that refuses local addresses.
func refuseLocal(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: dial %s: %w", address, err)
	}
	ip := ap.Addr().Unmap()
	if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() {
		return fmt.Errorf("egress: %s is a local address, which the proxy does not dial", ip)
	}
	return nil
}
