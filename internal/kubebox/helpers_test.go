package kubebox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/resident"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The hooks pod's name, labels and container.
const (
	testPod       = "hooks-0"
	testLabels    = "app=hooks"
	testContainer = "hooks"
)

// testCluster is a test's namespace in the real cluster (kubecluster,
// shared by the package's tests), holding the hooks pod.
type testCluster struct {
	k          *kubecluster.Cluster
	ns         string
	kubeconfig string // the administrator's, context namespace ns
}

// startCluster makes the test a namespace, deleted when it ends, and runs
// the hooks pod there.
func startCluster(t testing.TB) *testCluster {
	t.Helper()
	k := kubecluster.Shared(t)
	ns := k.Namespace(t)
	c := &testCluster{k: k, ns: ns, kubeconfig: k.KubeconfigIn(t, ns)}
	c.runPod(t, testPod, map[string]string{"app": "hooks"})
	return c
}

// pod is a pod like a user's hooks pod: containers "hooks" and
// "zz-agent" of the busybox image, both sleeping. The containers share
// the pod's process namespace, so the pause process is their PID 1 and
// reaps orphans as an init does (a sleep as PID 1 would leave zombies).
func (c *testCluster) pod(t testing.TB, name string, labels map[string]string) *corev1.Pod {
	t.Helper()
	image := c.k.Image(t, dockertest.Busybox)
	grace, share := int64(1), true
	ctr := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: image, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "3600"}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns, Labels: labels},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			ShareProcessNamespace:         &share,
			Containers:                    []corev1.Container{ctr(testContainer), ctr("zz-agent")},
		},
	}
}

// runPod runs a hooks pod and waits until it is Running and Ready.
func (c *testCluster) runPod(t testing.TB, name string, labels map[string]string) {
	t.Helper()
	c.k.RunPod(t, c.pod(t, name, labels))
}

// pendingPod creates a hooks pod that stays Pending.
func (c *testCluster) pendingPod(t testing.TB, name string, labels map[string]string) {
	t.Helper()
	c.k.CreatePod(t, kubecluster.Unschedulable(c.pod(t, name, labels)))
}

// deletePod deletes a pod and waits until it is gone.
func (c *testCluster) deletePod(t testing.TB, name string) { c.k.DeletePod(t, c.ns, name) }

// exec runs argv in a pod's hooks container, out of band, and returns
// its stdout.
func (c *testCluster) exec(t testing.TB, pod string, argv ...string) string {
	t.Helper()
	return c.k.Exec(t, c.ns, pod, testContainer, argv...)
}

// restricted is a kubeconfig of a service account allowed exactly the
// "verb resource" pairs given (none: nothing at all).
func (c *testCluster) restricted(t testing.TB, name string, allowed ...string) string {
	t.Helper()
	var rules []kubecluster.Rule
	for _, a := range allowed {
		verb, resource, ok := strings.Cut(a, " ")
		if !ok {
			t.Fatalf("permission %q is not \"verb resource\"", a)
		}
		rules = append(rules, kubecluster.Rule{Resource: resource, Verbs: []string{verb}})
	}
	return c.k.RoleKubeconfig(t, c.ns, name, rules...)
}

// transports are the transports to test; cli only where kubectl is.
func transports(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		ci.DoWithout(t, fmt.Sprintf("kubectl is not on PATH, so only the native transport is tested (make deps installs Debian's kubernetes-client): %v", err))
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
	sb, err := Factory(context.Background(), uniqueName(t), full)
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

// ps lists a pod's processes (its containers share one namespace).
func (c *testCluster) ps(t testing.TB, pod string) string {
	t.Helper()
	return c.exec(t, pod, "ps", "-o", "pid,args")
}

// leftovers lists the processes in a pod other than its own (the pause
// process as PID 1, the containers' sleeps), the ps that lists them and
// the warm sessions' wrappers waiting for calls (a call's processes are
// their children, and would show).
func (c *testCluster) leftovers(t *testing.T, pod string) []string {
	t.Helper()
	var left []string
	out := c.ps(t, pod)
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
func (c *testCluster) awaitNoLeftovers(t *testing.T, pod string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := c.leftovers(t, pod)
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
