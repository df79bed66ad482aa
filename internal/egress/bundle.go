package egress

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"sync"
)

// Injects reports whether a rule adds a credential: the proxy then
// answers for that host itself, and the sandbox must trust its CA
// (TrustBundle).
func Injects(rules []Rule) bool {
	return slices.ContainsFunc(rules, func(r Rule) bool { return r.Secret != "" })
}

// Describe lists the rules' hosts, each with the header it adds, for a
// provisioned sandbox's details.
func Describe(rules []Rule) string {
	hosts := make([]string, len(rules))
	for i, r := range rules {
		hosts[i] = r.String()
		if r.Secret != "" {
			hosts[i] += " (+" + r.Header + ")"
		}
	}
	return strings.Join(hosts, ", ")
}

// TrustBundle is what a sandbox whose proxy intercepts some hosts
// trusts: the host's public roots and the proxy's CA, PEM-encoded.
func (p *Proxy) TrustBundle() []byte {
	return append(slices.Clip(systemRoots()), p.CACertPEM()...)
}

// systemBundles are where Linux distributions keep the public roots, as
// Go's crypto/x509 looks for them.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// systemRoots is the first public roots bundle found, newline-ended;
// none when the host has none, and then a sandbox trusts only hosts its
// proxy answers for. Read once: every provision with a credential rule
// hands it out again.
var systemRoots = sync.OnceValue(readSystemRoots)

func readSystemRoots() []byte {
	paths := systemBundles
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		paths = append([]string{f}, paths...)
	}
	for _, path := range paths {
		b, err := os.ReadFile(path) // #nosec G304 G703 -- a well-known roots bundle, or the one SSL_CERT_FILE names
		if err == nil && bytes.Contains(b, []byte("BEGIN CERTIFICATE")) {
			if !bytes.HasSuffix(b, []byte("\n")) {
				b = append(b, '\n')
			}
			return b
		}
	}
	return nil
}
