package plugin

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// connPair is a connected pair of unix sockets.
func connPair(tb testing.TB) (net.Conn, net.Conn) {
	tb.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	conns := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			tb.Fatal(err)
		}
		conns[i] = c
	}
	return conns[0], conns[1]
}

// handshake runs a TLS handshake between the two configurations and
// returns each side's error.
func handshake(tb testing.TB, client, server *tls.Config) (state tls.ConnectionState, clientErr, serverErr error) {
	tb.Helper()
	c, s := connPair(tb)
	defer c.Close()
	defer s.Close()
	tc, ts := tls.Client(c, client), tls.Server(s, server)
	done := make(chan error, 1)
	go func() {
		err := ts.Handshake()
		if err == nil {
			// TLS 1.3 checks the client certificate after the client's
			// handshake has returned: read to see the verdict.
			_, err = ts.Read(make([]byte, 1))
		}
		ts.Close()
		done <- err
	}()
	clientErr = tc.Handshake()
	if clientErr == nil {
		_, clientErr = tc.Write([]byte("x"))
		state = tc.ConnectionState()
	}
	tc.Close()
	serverErr = <-done
	return state, clientErr, serverErr
}

func serverConfig(tb testing.TB, lt *LaunchTLS) *tls.Config {
	tb.Helper()
	cfg, err := serverTLSConfig(lt.material)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

func TestLaunchTLSHandshake(t *testing.T) {
	lt, err := NewLaunchTLS()
	if err != nil {
		t.Fatal(err)
	}
	state, cerr, serr := handshake(t, lt.HostConfig(), serverConfig(t, lt))
	if cerr != nil || serr != nil {
		t.Fatalf("handshake: client %v, server %v", cerr, serr)
	}
	if state.Version != tls.VersionTLS13 {
		t.Errorf("TLS version %x, want 1.3", state.Version)
	}
	if len(state.PeerCertificates) != 1 || !bytes.Equal(state.PeerCertificates[0].Raw, lt.pluginLeaf.Raw) {
		t.Error("the host did not see the plugin's certificate")
	}
	if len(lt.material) > pipeAtomic {
		t.Errorf("material is %d bytes, over the %d a pipe holds", len(lt.material), pipeAtomic)
	}
}

func TestLaunchTLSRejectsStrangers(t *testing.T) {
	mine, err := NewLaunchTLS()
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewLaunchTLS()
	if err != nil {
		t.Fatal(err)
	}

	// A client that trusts the plugin but presents another launch's
	// host certificate is refused by the plugin.
	foreign := other.HostConfig()
	foreign.RootCAs = mine.HostConfig().RootCAs
	_, _, serr := handshake(t, foreign, serverConfig(t, mine))
	if serr == nil || !strings.Contains(serr.Error(), "certificate") {
		t.Errorf("foreign client certificate: server error %v, want a certificate failure", serr)
	}

	// No client certificate at all.
	anonymous := mine.HostConfig()
	anonymous.Certificates = nil
	_, _, serr = handshake(t, anonymous, serverConfig(t, mine))
	if serr == nil {
		t.Error("a client without a certificate was accepted")
	}

	// The host does not accept another launch's plugin.
	_, cerr, _ := handshake(t, mine.HostConfig(), serverConfig(t, other))
	if cerr == nil || !strings.Contains(cerr.Error(), "x509") {
		t.Errorf("foreign plugin certificate: client error %v, want an x509 failure", cerr)
	}

	// Nothing older than TLS 1.3.
	old := mine.HostConfig()
	old.MinVersion, old.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	_, cerr, _ = handshake(t, old, serverConfig(t, mine))
	if cerr == nil {
		t.Error("a TLS 1.2 client was accepted")
	}
}

func TestServerTLSConfigRejectsBadMaterial(t *testing.T) {
	a, _ := NewLaunchTLS()
	b, _ := NewLaunchTLS()
	blocks := func(lt *LaunchTLS) []string {
		parts := strings.SplitAfter(string(lt.material), "-----\n-----BEGIN")
		if len(parts) != 3 {
			t.Fatalf("material has %d blocks", len(parts))
		}
		out := make([]string, 3)
		for i, p := range parts {
			p = strings.TrimSuffix(p, "-----BEGIN")
			if i > 0 {
				p = "-----BEGIN" + p
			}
			out[i] = p
		}
		return out
	}
	ab, bb := blocks(a), blocks(b)
	cases := map[string]string{
		"empty":            "",
		"garbage":          "hello",
		"trailing garbage": string(a.material) + "junk",
		"missing key":      ab[0] + ab[2],
		"duplicate":        ab[0] + ab[1] + ab[2] + ab[2],
		"other key":        ab[0] + bb[1] + ab[2],
		"foreign block":    ab[0] + ab[1] + ab[2] + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
	}
	for name, material := range cases {
		if _, err := serverTLSConfig([]byte(material)); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// Attach hands the material to a real child on an inherited descriptor.
func TestAttachPassesMaterialOnAPipe(t *testing.T) {
	lt, err := NewLaunchTLS()
	if err != nil {
		t.Fatal(err)
	}
	extra, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	cmd := exec.Command("sh", "-c", `printf '%s\n' "$`+EnvTLSFD+`"; exec cat <&4`)
	cmd.Env = os.Environ()
	cmd.ExtraFiles = []*os.File{extra} // so ours is fd 4
	if err := lt.Attach(cmd); err != nil {
		t.Fatal(err)
	}
	if err := lt.Attach(cmd); err == nil {
		t.Error("a second Attach was accepted")
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := lt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lt.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if want := "4\n" + string(lt.material); out.String() != want {
		t.Fatalf("child read %q, want %q", out.String(), want)
	}
	if strings.Contains(strings.Join(cmd.Env, "\n"), "PRIVATE KEY") {
		t.Fatal("key material in the environment")
	}

	started := exec.Command("true")
	if err := started.Start(); err != nil {
		t.Fatal(err)
	}
	_ = started.Wait()
	lt2, _ := NewLaunchTLS()
	if err := lt2.Attach(started); err == nil {
		t.Error("Attach to a started command was accepted")
	}
}

// loadLaunchTLS reads the descriptor, closes it and clears the variable.
func TestLoadLaunchTLS(t *testing.T) {
	lt, err := NewLaunchTLS()
	if err != nil {
		t.Fatal(err)
	}
	fd := pipeWith(t, lt.material, true)
	t.Setenv(EnvTLSFD, fmt.Sprint(fd))
	cfg, err := loadLaunchTLS()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := os.LookupEnv(EnvTLSFD); ok {
		t.Error(EnvTLSFD + " is still set")
	}
	if _, err := fcntlGetfd(fd); !errors.Is(err, syscall.EBADF) {
		t.Errorf("fd %d still open after loading", fd)
	}
	if _, cerr, serr := handshake(t, lt.HostConfig(), cfg); cerr != nil || serr != nil {
		t.Fatalf("handshake with the loaded config: %v / %v", cerr, serr)
	}

	os.Unsetenv(EnvTLSFD)
	if _, err := loadLaunchTLS(); !errors.Is(err, errNoTLS) {
		t.Errorf("without %s: %v", EnvTLSFD, err)
	}
	for _, v := range []string{"", "x", "1", "-3"} {
		t.Setenv(EnvTLSFD, v)
		if _, err := loadLaunchTLS(); err == nil || !strings.Contains(err.Error(), "not an inherited file descriptor") {
			t.Errorf("%s=%q: %v", EnvTLSFD, v, err)
		}
	}

	// A descriptor that never reaches EOF times out instead of hanging.
	old := materialReadTimeout
	materialReadTimeout = 100 * time.Millisecond
	defer func() { materialReadTimeout = old }()
	t.Setenv(EnvTLSFD, fmt.Sprint(pipeWith(t, lt.material, false)))
	if _, err := loadLaunchTLS(); err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("open pipe: %v, want a deadline error", err)
	}
}

// pipeWith returns the read end of a pipe holding data, as a bare
// descriptor; closeWrite false leaves a writer open, so no EOF comes.
func pipeWith(t *testing.T, data []byte, closeWrite bool) int {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if closeWrite {
		w.Close()
	} else {
		t.Cleanup(func() { w.Close() })
	}
	fd, err := syscall.Dup(int(r.Fd()))
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func fcntlGetfd(fd int) (uintptr, error) {
	v, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if errno != 0 {
		return 0, errno
	}
	return v, nil
}

// BenchmarkLaunchTLS is what mutual TLS adds to a plugin's cold start:
// the host's key and certificate generation, the plugin's parsing of its
// material, and one TLS 1.3 handshake over a unix socket.
func BenchmarkLaunchTLS(b *testing.B) {
	for b.Loop() {
		lt, err := NewLaunchTLS()
		if err != nil {
			b.Fatal(err)
		}
		cfg, err := serverTLSConfig(lt.material)
		if err != nil {
			b.Fatal(err)
		}
		if _, cerr, serr := handshake(b, lt.HostConfig(), cfg); cerr != nil || serr != nil {
			b.Fatal(cerr, serr)
		}
	}
}
