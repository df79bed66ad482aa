package egress

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"time"
)

// caValidity is how long a proxy's CA is valid: a sandbox lives hours or
// days, and a CA that outlives it by little is worth little to anyone
// who copies it.
const caValidity = 7 * 24 * time.Hour

// clockSkew backdates certificates, so a sandbox whose clock runs a
// little behind the host's still accepts them.
const clockSkew = 5 * time.Minute

// maxLeaves bounds the leaf certificates a CA keeps: a wildcard rule
// allows any number of names.
const maxLeaves = 64

// ca is a proxy's own certificate authority, made in memory, that mints
// a leaf certificate for each intercepted host.
type ca struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
	order  []string // oldest first, for eviction
}

// newCA makes a CA named for the sandbox, constrained to the hosts of
// the rules that carry a credential: those are the only ones it signs
// for.
func newCA(name string, rules []Rule, now time.Time) (*ca, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("egress CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:                serial(),
		Subject:                     pkix.Name{CommonName: "promptkit-sandbox egress CA for " + name, Organization: []string{"promptkit-sandbox"}},
		NotBefore:                   now.Add(-clockSkew),
		NotAfter:                    now.Add(caValidity),
		IsCA:                        true,
		BasicConstraintsValid:       true,
		MaxPathLenZero:              true,
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		PermittedDNSDomainsCritical: true,
	}
	constrain(tmpl, rules)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("egress CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("egress CA certificate: %w", err)
	}
	return &ca{
		cert:    cert,
		key:     key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		leaves:  map[string]*tls.Certificate{},
	}, nil
}

// constrain limits tmpl to signing for the credential rules' hosts. With
// none, it permits only the reserved name "invalid" (RFC 2606), which
// nothing real has, and no IP address.
func constrain(tmpl *x509.Certificate, rules []Rule) {
	for _, r := range rules {
		if r.Secret == "" {
			continue
		}
		if ip := net.ParseIP(r.Host); ip != nil {
			bits := 8 * len(ip.To16())
			if v4 := ip.To4(); v4 != nil {
				ip, bits = v4, 32
			}
			tmpl.PermittedIPRanges = append(tmpl.PermittedIPRanges, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		// "example.com" permits it and every name under it; a wildcard
		// rule's suffix is the nearest that says so.
		tmpl.PermittedDNSDomains = append(tmpl.PermittedDNSDomains, strings.TrimPrefix(r.Host, "*."))
	}
	if len(tmpl.PermittedDNSDomains) == 0 {
		tmpl.PermittedDNSDomains = []string{"invalid"}
	}
	if len(tmpl.PermittedIPRanges) == 0 {
		// An empty permitted list constrains nothing: exclude every
		// address instead.
		tmpl.ExcludedIPRanges = []*net.IPNet{
			{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)},
			{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)},
		}
	}
}

// serial is a random 128-bit certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		// crypto/rand does not fail on the systems Go supports.
		panic(fmt.Sprintf("egress: random serial: %v", err))
	}
	return n
}

// leaf returns a certificate for host (a DNS name or an IP address),
// minting it the first time.
func (c *ca) leaf(host string, now time.Time) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.leaves[host]; ok && now.Before(l.Leaf.NotAfter) {
		return l, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("leaf key for %s: %w", host, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     c.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("leaf certificate for %s: %w", host, err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("leaf certificate for %s: %w", host, err)
	}
	l := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: parsed}
	if _, ok := c.leaves[host]; !ok {
		if len(c.order) >= maxLeaves {
			delete(c.leaves, c.order[0])
			c.order = c.order[1:]
		}
		c.order = append(c.order, host)
	}
	c.leaves[host] = l
	return l, nil
}
