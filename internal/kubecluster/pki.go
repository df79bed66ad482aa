package kubecluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The cluster's PKI is made fresh by every Start, in Go (ECDSA P-256: fast
// to generate, and accepted everywhere Kubernetes takes a key), and lives
// in the state directory: nothing outlives the cluster.

// certSpec is one certificate signed by the cluster CA.
type certSpec struct {
	name   string // file stem: <name>.crt, <name>.key
	cn     string
	org    string
	server bool // serverAuth with SANs, else clientAuth
	ips    []net.IP
	dns    []string
}

// serviceIP is the first address of the service range: the apiserver's
// ClusterIP ("kubernetes.default"), which its certificate must name.
var serviceIP = net.ParseIP("10.96.0.1")

var certSpecs = []certSpec{
	{name: "apiserver", cn: "kube-apiserver", server: true,
		ips: []net.IP{net.IPv4(127, 0, 0, 1), serviceIP},
		dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}},
	{name: "kubelet-serving", cn: "system:node:" + nodeName, org: "system:nodes", server: true,
		ips: []net.IP{net.IPv4(127, 0, 0, 1)}, dns: []string{nodeName}},
	{name: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", org: "system:masters"},
	{name: "admin", cn: "kubernetes-admin", org: "system:masters"},
	{name: "controller-manager", cn: "system:kube-controller-manager"},
	{name: "scheduler", cn: "system:kube-scheduler"},
	{name: "kubelet", cn: "system:node:" + nodeName, org: "system:nodes"},
	{name: "kube-proxy", cn: "system:kube-proxy"},
	// kube-router has no bootstrap role of its own; a test cluster can
	// spare it a custom ClusterRole's worth of care.
	{name: "kube-router", cn: "kube-router", org: "system:masters"},
}

// kubeconfigUsers are the components that get a kubeconfig, by the name of
// their client certificate.
var kubeconfigUsers = []string{"admin", "controller-manager", "scheduler", "kubelet", "kube-proxy", "kube-router"}

// writePKI writes the CA, every certificate of certSpecs, the service
// account signing key and a kubeconfig per kubeconfigUsers into dir.
func writePKI(dir, server string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour) // tolerate a little clock skew
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "promptkit-kubecluster-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return fmt.Errorf("making the CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writePair(dir, "ca", caDER, caKey); err != nil {
		return err
	}
	for i, s := range certSpecs {
		if err := writeCert(dir, s, int64(i+2), now, ca, caKey); err != nil {
			return fmt.Errorf("certificate %s: %w", s.name, err)
		}
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), saKey); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub, 0o644); err != nil {
		return err
	}
	for _, user := range kubeconfigUsers {
		if err := writeKubeconfig(dir, user, server); err != nil {
			return fmt.Errorf("kubeconfig %s: %w", user, err)
		}
	}
	return nil
}

func writeCert(dir string, s certSpec, serial int64, now time.Time, ca *x509.Certificate, caKey crypto.Signer) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: s.cn},
		NotBefore:    now,
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IPAddresses:  s.ips,
		DNSNames:     s.dns,
	}
	if s.org != "" {
		tmpl.Subject.Organization = []string{s.org}
	}
	if s.server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return err
	}
	return writePair(dir, s.name, der, key)
}

func writePair(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der, 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(dir, name+".key"), key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

// writeKubeconfig writes <user>.kubeconfig, with the CA and the user's
// client certificate embedded, so the file works from anywhere.
func writeKubeconfig(dir, user, server string) error {
	// #nosec G304 -- the test cluster's own PKI directory, names fixed below
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	ca, err := read("ca.crt")
	if err != nil {
		return err
	}
	crt, err := read(user + ".crt")
	if err != nil {
		return err
	}
	key, err := read(user + ".key")
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubecluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts["kubecluster"] = &clientcmdapi.Context{Cluster: "kubecluster", AuthInfo: user}
	cfg.CurrentContext = "kubecluster"
	return clientcmd.WriteToFile(*cfg, filepath.Join(dir, user+".kubeconfig"))
}
