package kubebox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/kubetest"
	"github.com/altairalabs/promptkit-sandbox/shared/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/shared/resident"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The harness's namespace and the hooks pod's name, labels and container.
const (
	testNS     = "promptkit"
	testPod    = "hooks-0"
	testLabels = "app=hooks"
)

// cluster is a loopback API server with a pod whose containers are real
// Docker containers: "hooks" (busybox) and "agent".
type testCluster struct {
	srv        *kubetest.Server
	kubeconfig string
	hooks      string // the Docker container behind the hooks container
}

func startCluster(t testing.TB) *testCluster {
	t.Helper()
	dockertest.Require(t)
	c := &testCluster{srv: kubetest.Start(t)}
	c.hooks = startContainer(t, "")
	c.srv.AddPod(testNS, testPod, map[string]string{"app": "hooks"}, map[string]string{"hooks": c.hooks, "zz-agent": startContainer(t, "")})
	c.kubeconfig = c.srv.Kubeconfig(t, t.TempDir(), testNS)
	return c
}

// startContainer runs a busybox container that sleeps, for a pod.
func startContainer(t testing.TB, hostname string) string {
	t.Helper()
	args := []string{"run", "-d", "--init", "--network", "none", "--label", dockertest.UniqueLabel(t)}
	if hostname != "" {
		args = append(args, "--hostname", hostname)
	}
	img := dockertest.Image(t, dockertest.Busybox)
	return strings.TrimSpace(dockertest.Docker(t, append(args, img, "sleep", "3600")...))
}

// transports are the transports to test; cli only where kubectl is.
func transports(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("kubectl not found on PATH (make deps installs Debian's kubernetes-client): %v", err)
		}
		t.Logf("kubectl not found on PATH: testing the native transport only (CI fails instead): %v", err)
		return []string{TransportNative, nativeNoResident}
	}
	return []string{TransportNative, nativeNoResident, TransportCLI}
}

// nativeNoResident is the native transport with resident: false, an
// exec session per call, as a transport for the tests.
const nativeNoResident = "native-noresident"

// eachTransport runs fn as a subtest per transport.
func eachTransport(t *testing.T, fn func(t *testing.T, transport string)) {
	for _, tr := range transports(t) {
		t.Run(tr, func(t *testing.T) { fn(t, tr) })
	}
}

func (c *testCluster) open(t *testing.T, transport string, cfg map[string]any) *Sandbox {
	t.Helper()
	sb, err := c.tryOpen(t, transport, cfg)
	if err != nil {
		t.Fatalf("Factory: %v", err)
	}
	return sb
}

func (c *testCluster) tryOpen(t *testing.T, transport string, cfg map[string]any) (*Sandbox, error) {
	t.Helper()
	full := map[string]any{"kubeconfig": c.kubeconfig, "transport": transport}
	if transport == nativeNoResident {
		full["transport"], full["resident"] = TransportNative, false
	}
	if _, ok := cfg["selector"]; !ok {
		full["pod"] = testPod
	}
	for k, v := range cfg {
		if v == nil {
			delete(full, k)
			continue
		}
		full[k] = v
	}
	sb, err := Factory(uniqueName(t), full)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = sb.(*Sandbox).Close() })
	return sb.(*Sandbox), nil
}

func uniqueName(t *testing.T) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "t-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())) + "-" + hex.EncodeToString(b[:])
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// leftovers lists the processes in a container other than its own
// (init, the sleep), the ps that lists them and the warm sessions'
// wrappers waiting for calls (a call's processes are their children, and
// would show).
func leftovers(t *testing.T, container string) []string {
	t.Helper()
	var left []string
	out := dockertest.Docker(t, "exec", container, "ps", "-o", "pid,args")
	for _, line := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		args := strings.Join(f[1:], " ")
		if f[0] == "1" || args == "sleep 3600" || strings.HasPrefix(args, "ps ") || strings.HasSuffix(args, " pks-wrapper") ||
			strings.HasSuffix(args, " "+resident.Flag) {
			continue
		}
		left = append(left, line)
	}
	return left
}

// awaitNoLeftovers waits briefly for the kill to be seen, then asserts
// the container holds nothing of the calls.
func awaitNoLeftovers(t *testing.T, container string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := leftovers(t, container)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left in the container:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func wantKind(t *testing.T, err error, kind sandbox.Kind, contains ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", kind)
	}
	t.Logf("%s error: %v", kind, err)
	if got := sandbox.KindOf(err); got != kind {
		t.Fatalf("kind %s, want %s: %v", got, kind, err)
	}
	for _, s := range contains {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

var _ = remoteproc.Prefix
