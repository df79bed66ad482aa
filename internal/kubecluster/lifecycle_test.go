package kubecluster

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// TestLifecycle brings a cluster of its own up, proves it works and that
// the kernel settings are untouched, brings it down, and proves that down
// left nothing behind: no process, mount, network namespace, link,
// iptables rule, listener, cgroup or state directory, and no sysctl
// changed.
func TestLifecycle(t *testing.T) {
	Require(t)
	l := layout(DefaultDir())
	var before hostSnapshot

	ctx := context.Background()
	start := time.Now()
	c, err := Start(ctx, Options{Log: t.Logf, claimed: func() {
		before = snapshotHost(t, l)
		// Start has made the state directory by now (it holds the
		// lock's owner); down must remove it, as if it never was.
		delete(before, "statedir")
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start took %s", time.Since(start).Round(10*time.Millisecond))
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			if err := c.Stop(context.Background()); err != nil {
				t.Error(err)
			}
		}
	})

	if got := sysctls(t); !equal(got, before["sysctls"]) {
		t.Errorf("sysctls changed by up:\nbefore %v\nafter  %v", before["sysctls"], got)
	}
	t.Run("SnapshotSeesTheCluster", func(t *testing.T) { testSnapshotSees(t, c, before) })
	t.Run("Exec", func(t *testing.T) { testExec(t, c) })
	t.Run("Service", func(t *testing.T) { testService(t, c) })
	t.Run("NetworkPolicy", func(t *testing.T) { testNetworkPolicy(t, c) })
	t.Run("APIFromPod", func(t *testing.T) { testAPIFromPod(t, c) })

	start = time.Now()
	err = c.Stop(ctx)
	stopped = true
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop took %s", time.Since(start).Round(10*time.Millisecond))
	after := snapshotHost(t, l)
	for _, d := range before.diff(after) {
		t.Errorf("left behind by down: %s", d)
	}
}

// testSnapshotSees proves the snapshot would notice what a running
// cluster with a pod has made, of every kind down must remove: a snapshot
// that missed a kind would make the final comparison vacuous there.
func testSnapshotSees(t *testing.T, c *Cluster, before hostSnapshot) {
	ns := c.Namespace(t)
	c.RunPod(t, hooksPod(c, t, ns, "box"))
	seen := map[string]bool{}
	for _, d := range before.diff(snapshotHost(t, c.l)) {
		seen[strings.SplitN(d, ":", 2)[0]] = true
	}
	for _, kind := range []string{"processes", "mounts", "netns", "links", "iptables", "listeners", "cgroups", "statedir", "hostdirs"} {
		if !seen[kind] {
			t.Errorf("a running cluster added no %s to the snapshot", kind)
		}
	}
}

func equal(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// hooksPod is a pod of the hooks test image that sleeps, for execs.
func hooksPod(c *Cluster, t *testing.T, ns, name string, command ...string) *corev1.Pod {
	if len(command) == 0 {
		command = []string{"/bin/sleep", "3600"}
	}
	grace := int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "main", Image: c.Image(t, dockertest.Hooks), ImagePullPolicy: corev1.PullNever,
				Command: command,
			}},
		},
	}
}

// testExec runs a pod of the hooks image and execs into it with kubectl
// and with client-go, stdin through, and shows what the real runtime says
// about a binary that is not there.
func testExec(t *testing.T, c *Cluster) {
	ns := c.Namespace(t)
	pod := c.RunPod(t, hooksPod(c, t, ns, "box"))

	kubectl := func(stdin string, args ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(c.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig, "-n", ns}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("kubectl: %v", err)
		}
		return o.String(), e.String(), cmd.ProcessState.ExitCode()
	}

	t.Run("KubectlStdin", func(t *testing.T) {
		out, errOut, code := kubectl("hello through kubectl\n", "exec", "-i", pod.Name, "--", "/hooks/echo")
		if code != 0 || out != "hello through kubectl\n" {
			t.Errorf("kubectl exec -i /hooks/echo: code %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
	t.Run("KubectlExitCode", func(t *testing.T) {
		_, errOut, code := kubectl("", "exec", pod.Name, "--", "/hooks/exitcode", "7")
		if code != 7 {
			t.Errorf("kubectl exec /hooks/exitcode 7: code %d, stderr %q", code, errOut)
		}
	})
	t.Run("ClientGo", func(t *testing.T) {
		stdout, stderr, err := clientExec(c, ns, pod.Name, "hello through client-go", "/hooks/echo")
		if err != nil || stdout != "hello through client-go" {
			t.Errorf("client-go exec /hooks/echo: err %v, stdout %q, stderr %q", err, stdout, stderr)
		}
	})
	// A real runtime does not answer a missing binary with 126 or 127, as
	// a shell would: runc fails the exec and the kubelet sends an Internal
	// error status ("OCI runtime exec failed: ... no such file or
	// directory") instead of an exit code. kubectl prints it and exits 1;
	// client-go returns it as an error that is not an exec.ExitError.
	t.Run("MissingBinary", func(t *testing.T) {
		out, errOut, code := kubectl("", "exec", pod.Name, "--", "/no/such/binary")
		t.Logf("kubectl exec /no/such/binary: code %d, stdout %q, stderr %q", code, out, errOut)
		if code != 1 || !strings.Contains(errOut, "OCI runtime exec failed") || !strings.Contains(errOut, "no such file or directory") {
			t.Errorf("kubectl exec of a missing binary: code %d, want 1 and OCI runtime exec failed ... no such file or directory", code)
		}
		stdout, stderr, err := clientExec(c, ns, pod.Name, "", "/no/such/binary")
		t.Logf("client-go exec /no/such/binary: err %v, stdout %q, stderr %q", err, stdout, stderr)
		var ee utilexec.ExitError
		if err == nil || errors.As(err, &ee) || !strings.Contains(err.Error(), "OCI runtime exec failed") ||
			!strings.Contains(err.Error(), "no such file or directory") {
			t.Errorf("client-go exec of a missing binary: err %v, want a non-exit error saying OCI runtime exec failed ... no such file or directory", err)
		}
	})
}

// clientExec runs argv in the pod with client-go's WebSocket executor,
// the transport kubectl_exec's native path tries first.
func clientExec(c *Cluster, ns, pod, stdin string, argv ...string) (stdout, stderr string, err error) {
	u := c.Client.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: "main", Command: argv, Stdin: stdin != "", Stdout: true, Stderr: true,
		}, scheme.ParameterCodec).URL()
	ex, err := remotecommand.NewWebSocketExecutor(c.Config, "GET", u.String())
	if err != nil {
		return "", "", err
	}
	var o, e bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &o, Stderr: &e}
	if stdin != "" {
		opts.Stdin = strings.NewReader(stdin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = ex.StreamWithContext(ctx, opts)
	return o.String(), e.String(), err
}
