// Package egresstest routes an egress proxy's upstreams to servers a
// test runs on loopback, as providers' tests of egress rules need:
// never the internet.
package egresstest

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
)

// Dial is how a proxy opens its upstreams (egress.Options.Dial).
type Dial = func(ctx context.Context, network, addr string) (net.Conn, error)

// Upstreams returns a Dial that takes each "host:port" of routes to its
// server, and refuses every other address, and the roots that trust the
// servers' certificates (httptest's are for example.com).
func Upstreams(routes map[string]*httptest.Server) (Dial, *x509.CertPool) {
	roots := x509.NewCertPool()
	for _, s := range routes {
		if s.Certificate() != nil {
			roots.AddCert(s.Certificate())
		}
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		s, ok := routes[addr]
		if !ok {
			return nil, fmt.Errorf("no route to %s in this test", addr)
		}
		return (&net.Dialer{}).DialContext(ctx, network, s.Listener.Addr().String())
	}
	return dial, roots
}

// Get has a sandbox's Bash ask the proxy its environment names
// ($HTTP_PROXY) for url, as an HTTP client would, through bash's own
// /dev/tcp (no client of the image's), and returns the whole answer,
// status line and headers included.
func Get(t testing.TB, cs *mcp.ClientSession, url, host string) string {
	t.Helper()
	return mcptest.CallText(t, cs, "Bash", map[string]any{"command": fmt.Sprintf(`p=${HTTP_PROXY#http://}; exec 3<>/dev/tcp/${p%%:*}/${p##*:} &&
printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' >&3 && cat <&3`, url, host)})
}

// ProcessTree is the host PID pid and every process under it.
func ProcessTree(pid string) []string {
	pids := []string{strings.TrimSpace(pid)}
	for i := 0; i < len(pids); i++ {
		tasks, _ := filepath.Glob("/proc/" + pids[i] + "/task/*/children")
		for _, f := range tasks {
			b, _ := os.ReadFile(f) // #nosec G304 G703 -- a /proc file of a process of the test's own sandbox
			pids = append(pids, strings.Fields(string(b))...)
		}
	}
	return pids
}

// CgroupProcesses is every host process whose cgroup path holds part
// (a Pod's "pod<UID>"), found through /proc.
func CgroupProcesses(part string) []string {
	var pids []string
	files, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, f := range files {
		b, err := os.ReadFile(f) // #nosec G304 -- /proc
		if err == nil && strings.Contains(string(b), part) {
			pids = append(pids, strings.TrimSuffix(strings.TrimPrefix(f, "/proc/"), "/cgroup"))
		}
	}
	return pids
}

// MemoryHolding returns the process (PID and command) of pids whose
// readable memory holds needle, as a core dump of it would, or "". It
// reads /proc/PID/mem, which takes root for a process that is not
// dumpable, and fails the test when it could read fewer than two (a
// sandbox's init and sandboxd at least).
func MemoryHolding(t testing.TB, pids []string, needle []byte) string {
	t.Helper()
	scanned := 0
	for _, p := range pids {
		if where := processHolding(p, needle); where != "" {
			return where
		} else if _, err := os.Stat("/proc/" + p + "/mem"); err == nil {
			scanned++
		}
	}
	if scanned < 2 {
		t.Fatalf("searched the memory of %d of the processes %v, want the sandbox's init and sandboxd at least", scanned, pids)
	}
	return ""
}

// processHolding searches the readable mappings of process p for needle.
func processHolding(p string, needle []byte) string {
	maps, err := os.ReadFile("/proc/" + p + "/maps") // #nosec G304 -- /proc
	if err != nil {
		return ""
	}
	mem, err := os.Open("/proc/" + p + "/mem") // #nosec G304 -- /proc
	if err != nil {
		return ""
	}
	defer mem.Close()
	for line := range strings.SplitSeq(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1][0] != 'r' {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start || end-start > 1<<30 {
			continue
		}
		buf := make([]byte, end-start)
		n, _ := mem.ReadAt(buf, int64(start)) // #nosec G115 -- a mapping's address fits an int64
		if bytes.Contains(buf[:n], needle) {
			comm, _ := os.ReadFile("/proc/" + p + "/comm") // #nosec G304 -- /proc
			return p + " (" + strings.TrimSpace(string(comm)) + ")"
		}
	}
	return ""
}
