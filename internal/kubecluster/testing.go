package kubecluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// howToFix tells a developer what a cluster needs.
const howToFix = "run the tests as root on Linux (make test installs etcd-server, containerd, runc and containernetworking-plugins with apt-get)"

// Require makes a test need a cluster: under go test -short (make unit) it
// skips before building or installing anything; where a cluster cannot
// run (not Linux, not root, packages missing and not installable) it
// skips, saying why, unless CI is set, where it fails: CI must run these
// tests. It also requires Docker, which builds the images pods run.
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping in -short mode: needs a Kubernetes cluster (make test runs it)")
	}
	if problem := Problem(); problem != "" {
		ci.Skipf(t, "this test needs a Kubernetes cluster, but %s; %s", problem, howToFix)
	}
	dockertest.Require(t)
}

// shared is the test binary's cluster, started by the first Shared call
// and stopped by Main.
var shared struct {
	mu      sync.Mutex
	inMain  bool // Main is running the tests, so it will stop the cluster
	cluster *Cluster
	err     error
}

// Shared returns the test binary's cluster, starting it on first use (a
// first run on a machine also builds the binaries: minutes). The package's
// TestMain must call Main, which stops it when the tests are done:
//
//	func TestMain(m *testing.M) { os.Exit(kubecluster.Main(m)) }
func Shared(t testing.TB) *Cluster {
	t.Helper()
	Require(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.inMain {
		// Nothing would stop the cluster: it would outlive the test binary.
		t.Fatal("kubecluster.Shared needs the package's TestMain to call kubecluster.Main")
	}
	if shared.cluster == nil && shared.err == nil {
		shared.cluster, shared.err = Start(context.Background(), Options{Log: stderrLog})
	}
	if shared.err != nil {
		t.Fatalf("the shared cluster did not start: %v", shared.err)
	}
	return shared.cluster
}

// Runner runs a test binary's tests: a *testing.M, or a RunFunc that
// wraps another TestMain helper around it.
type Runner interface{ Run() int }

// RunFunc is a Runner made of a function.
type RunFunc func() int

// Run calls f.
func (f RunFunc) Run() int { return f() }

// Main runs the tests and then stops the shared cluster, if one started;
// a failure to stop it fails the run.
func Main(m Runner) int {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cluster != nil {
		if code != 0 {
			// What is most telling first: a CI log may keep only the head.
			shared.cluster.WriteShimStacks(os.Stderr, 30)
			shared.cluster.WriteShimTrees(os.Stderr, 60)
			shared.cluster.WriteComplaints(os.Stderr, 15)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := shared.cluster.Stop(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "kubecluster: stopping the shared cluster:", err)
			if code == 0 {
				code = 1
			}
		}
		shared.cluster = nil
	}
	return code
}

// stderrLog is the shared cluster's log: it outlives any one test.
func stderrLog(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// Image returns the reference of a dockertest image (dockertest.Hooks,
// dockertest.Busybox) imported into the cluster, building it first if
// needed. Pods run it by that reference with imagePullPolicy: Never.
func (c *Cluster) Image(t testing.TB, name string) string {
	t.Helper()
	ref := dockertest.Image(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.ImportImage(ctx, ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

var notDNSLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// namespaceName makes a namespace name, which must be a DNS label
// ([a-z0-9-], at most 63 long), from a test's name and a random suffix.
func namespaceName(testName, suffix string) string {
	name := notDNSLabel.ReplaceAllString(strings.ToLower(testName), "-")
	if len(name) > 50 {
		name = name[:50]
	}
	return strings.Trim(name, "-") + "-" + suffix
}

// Namespace creates a namespace for the test, named after it, and deletes
// it (waiting for its pods to go) when the test ends.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := namespaceName(t.Name(), hex.EncodeToString(b[:]))
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.Client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", name, err)
			return
		}
		err := waitFor(ctx, "namespace "+name+" to go", func(ctx context.Context) error {
			_, err := c.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
		if err != nil {
			t.Error(err)
		}
	})
	// Pods need the namespace's default service account, which the
	// controller-manager adds a moment after the namespace.
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := waitFor(ctx, "the default service account in "+name, func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// RunPod creates the pod and waits until it is Running with every
// container ready, failing the test (with the pod's status) otherwise.
func (c *Cluster) RunPod(t testing.TB, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods := c.Client.CoreV1().Pods(pod.Namespace)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	var last *corev1.Pod
	err := waitFor(ctx, "pod "+pod.Name+" to run", func(ctx context.Context) error {
		p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		last = p
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		for _, s := range p.Status.ContainerStatuses {
			if !s.Ready {
				return fmt.Errorf("container %s not ready", s.Name)
			}
		}
		return nil
	})
	if err != nil {
		if last != nil {
			t.Fatalf("%v; status: %+v", err, last.Status)
		}
		t.Fatal(err)
	}
	return last
}
