package plugin

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Per-launch mutual TLS.
//
// go-plugin's AutoMTLS generates a P-521 key on each side, which costs
// tens of milliseconds of every plugin's cold start. Here the host makes
// both certificates (Ed25519, self-signed, for "localhost") in well under
// a millisecond and hands the plugin its certificate, its key and the
// host's certificate on a pipe the child inherits as a file descriptor:
// never in the environment or on the command line, where other processes
// of the same user can read them.

// The PEM block types of the material passed to the plugin.
const (
	pemPluginCert = "PROMPTKIT PLUGIN CERTIFICATE"
	pemPluginKey  = "PROMPTKIT PLUGIN PRIVATE KEY"
	pemHostCert   = "PROMPTKIT HOST CERTIFICATE"
)

// certValidity is how long the certificates of one launch are valid.
// gRPC handshakes again whenever it reconnects, after an idle period
// among others (30 minutes by default), so the certificates must outlive
// the longest-running plugin process; the keys themselves never leave the
// two processes' memory, and die with them.
const certValidity = 366 * 24 * time.Hour

// curves are the key exchanges offered: X25519 alone. The default adds
// the hybrid X25519MLKEM768, which protects recorded traffic against a
// future quantum computer but costs about half a millisecond of every
// launch; this traffic never leaves the host (a unix socket between two
// processes of one user), so there is nothing to record without already
// being able to read both processes' memory.
var curves = []tls.CurveID{tls.X25519}

// maxMaterial bounds what a plugin reads from the TLS descriptor. The
// real material is about 1.3 KB.
const maxMaterial = 16 << 10

// pipeAtomic is the pipe capacity Linux guarantees (one page), so the
// host can write the material before the child runs without blocking.
const pipeAtomic = 4096

// materialReadTimeout bounds the plugin's read of the TLS descriptor, in
// case it is not the pipe the host made. A variable for tests.
var materialReadTimeout = 5 * time.Second

// LaunchTLS is the TLS material of one plugin launch: a certificate for
// the host (the TLS client) and one for the plugin (the server), each
// trusting only the other.
type LaunchTLS struct {
	host       tls.Certificate
	pluginLeaf *x509.Certificate
	material   []byte // PEM for the plugin: its cert and key, the host's cert

	mu       sync.Mutex
	attached bool
	readEnd  *os.File // the host's copy of the pipe's read end
}

// NewLaunchTLS generates the certificates for one launch.
func NewLaunchTLS() (*LaunchTLS, error) {
	now := time.Now()
	// The two certificates are independent: make them side by side.
	var (
		hostDER []byte
		hostKey ed25519.PrivateKey
		hostErr error
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		hostDER, hostKey, hostErr = selfSigned("promptkit-sandbox host", x509.ExtKeyUsageClientAuth, now)
	}()
	pluginDER, pluginKey, err := selfSigned("promptkit-sandbox plugin", x509.ExtKeyUsageServerAuth, now)
	wg.Wait()
	if hostErr != nil {
		return nil, fmt.Errorf("host certificate: %w", hostErr)
	}
	if err != nil {
		return nil, fmt.Errorf("plugin certificate: %w", err)
	}
	pluginLeaf, err := x509.ParseCertificate(pluginDER)
	if err != nil {
		return nil, fmt.Errorf("plugin certificate: %w", err)
	}
	hostLeaf, err := x509.ParseCertificate(hostDER)
	if err != nil {
		return nil, fmt.Errorf("host certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(pluginKey)
	if err != nil {
		return nil, fmt.Errorf("plugin key: %w", err)
	}
	var material bytes.Buffer
	for _, b := range []*pem.Block{
		{Type: pemPluginCert, Bytes: pluginDER},
		{Type: pemPluginKey, Bytes: keyDER},
		{Type: pemHostCert, Bytes: hostDER},
	} {
		if err := pem.Encode(&material, b); err != nil {
			return nil, err
		}
	}
	return &LaunchTLS{
		host:       tls.Certificate{Certificate: [][]byte{hostDER}, PrivateKey: hostKey, Leaf: hostLeaf},
		pluginLeaf: pluginLeaf,
		material:   material.Bytes(),
	}, nil
}

func selfSigned(cn string, usage x509.ExtKeyUsage, now time.Time) ([]byte, ed25519.PrivateKey, error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		DNSNames:              []string{"localhost"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		return nil, nil, err
	}
	return der, key, nil
}

// HostConfig is the host's side, for go-plugin's ClientConfig.TLSConfig:
// TLS 1.3, presenting the host certificate and trusting only this
// launch's plugin certificate. Each call returns a new Config.
func (l *LaunchTLS) HostConfig() *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(l.pluginLeaf)
	return &tls.Config{
		MinVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{l.host},
		RootCAs:          roots,
		ServerName:       "localhost",
		CurvePreferences: curves,
	}
}

// Attach passes the plugin its material on a pipe that cmd inherits: the
// read end goes into cmd.ExtraFiles and EnvTLSFD names its descriptor in
// cmd.Env (appended; go-plugin adds the host's environment after it).
// The material is written and the write end closed before Attach
// returns: it fits in the pipe's buffer, so nothing waits for the child.
//
// Call Attach once, before cmd starts, and Close after cmd.Start (for
// go-plugin: after Client.Client or Start returns, whether or not it
// succeeded) to release the host's copy of the read end.
func (l *LaunchTLS) Attach(cmd *exec.Cmd) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.attached:
		return errors.New("launch TLS: already attached to a command")
	case cmd.Process != nil:
		return errors.New("launch TLS: command already started")
	case len(l.material) > pipeAtomic:
		return fmt.Errorf("launch TLS: material is %d bytes, more than a pipe is guaranteed to hold", len(l.material))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("launch TLS: %w", err)
	}
	_, err = w.Write(l.material)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Close()
		return fmt.Errorf("launch TLS: write material: %w", err)
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	cmd.Env = append(cmd.Env, EnvTLSFD+"="+strconv.Itoa(fd))
	l.attached = true
	l.readEnd = r
	return nil
}

// Close releases the host's copy of the pipe. The child has its own from
// the moment it started, so call Close once cmd.Start has returned.
// Closing twice is harmless.
func (l *LaunchTLS) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.readEnd == nil {
		return nil
	}
	err := l.readEnd.Close()
	l.readEnd = nil
	return err
}

// errNoTLS is returned when a plugin was started without its TLS pipe.
var errNoTLS = errors.New(EnvTLSFD + " is not set, so there is no TLS material: refusing to serve in plaintext. " +
	"promptkit-sandbox passes the material when it starts a plugin; to run a plugin by hand for debugging, set " + EnvDebug + "=1")

// loadLaunchTLS reads the material from the descriptor named by EnvTLSFD,
// closes it and removes the variable, so neither leaks to the processes
// the plugin starts, and returns the plugin's server configuration.
func loadLaunchTLS() (*tls.Config, error) {
	v, ok := os.LookupEnv(EnvTLSFD)
	if !ok {
		return nil, errNoTLS
	}
	os.Unsetenv(EnvTLSFD)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not an inherited file descriptor", EnvTLSFD, v)
	}
	// Non-blocking, so the read below can time out if fd is not our pipe.
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("%s=%d: %w", EnvTLSFD, fd, err)
	}
	f := os.NewFile(uintptr(fd), "launch-tls")
	defer f.Close()
	if err := f.SetReadDeadline(time.Now().Add(materialReadTimeout)); err != nil {
		return nil, fmt.Errorf("%s=%d: %w", EnvTLSFD, fd, err)
	}
	material, err := io.ReadAll(io.LimitReader(f, maxMaterial+1))
	if err != nil {
		return nil, fmt.Errorf("read TLS material from fd %d: %w", fd, err)
	}
	if len(material) > maxMaterial {
		return nil, fmt.Errorf("TLS material on fd %d exceeds %d bytes", fd, maxMaterial)
	}
	return serverTLSConfig(material)
}

// serverTLSConfig is the plugin's side: TLS 1.3, presenting its own
// certificate and requiring the host's.
func serverTLSConfig(material []byte) (*tls.Config, error) {
	blocks := map[string][]byte{}
	for rest := material; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return nil, errors.New("TLS material: trailing data that is not PEM")
			}
			break
		}
		switch b.Type {
		case pemPluginCert, pemPluginKey, pemHostCert:
		default:
			return nil, fmt.Errorf("TLS material: unexpected PEM block %q", b.Type)
		}
		if _, dup := blocks[b.Type]; dup {
			return nil, fmt.Errorf("TLS material: two %q blocks", b.Type)
		}
		blocks[b.Type] = b.Bytes
	}
	for _, t := range []string{pemPluginCert, pemPluginKey, pemHostCert} {
		if blocks[t] == nil {
			return nil, fmt.Errorf("TLS material: no %q block", t)
		}
	}
	key, err := x509.ParsePKCS8PrivateKey(blocks[pemPluginKey])
	if err != nil {
		return nil, fmt.Errorf("TLS material: plugin key: %w", err)
	}
	leaf, err := x509.ParseCertificate(blocks[pemPluginCert])
	if err != nil {
		return nil, fmt.Errorf("TLS material: plugin certificate: %w", err)
	}
	hostCert, err := x509.ParseCertificate(blocks[pemHostCert])
	if err != nil {
		return nil, fmt.Errorf("TLS material: host certificate: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("TLS material: plugin key: unsupported type %T", key)
	}
	if pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(leaf.PublicKey) {
		return nil, errors.New("TLS material: the plugin key does not match the plugin certificate")
	}
	cert := tls.Certificate{Certificate: [][]byte{blocks[pemPluginCert]}, PrivateKey: key, Leaf: leaf}
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(hostCert)
	return &tls.Config{
		MinVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{cert},
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ClientCAs:        clientCAs,
		CurvePreferences: curves,
	}, nil
}
