package kubecodegen

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxdimage"
	"github.com/altairalabs/promptkit-sandbox/internal/scrapetest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestProvisionOnTheRealCluster is the provider end to end on the real
// cluster, as the service account deploy/kubernetes/codegen makes: the
// real sandboxd image, imported into the node, comes up; an independent
// MCP client at the endpoint writes, reads and runs commands in the
// workspace; inside, the sandbox can reach no pod while an unrestricted
// pod reaches the same one; Release leaves no object behind.
func TestProvisionOnTheRealCluster(t *testing.T) {
	k := kubecluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	img := imageOnNode(ctx, t, k)
	ns := k.Namespace(t)
	kubeconfig := k.CodegenKubeconfig(t, ns)

	// A web server, and a client whose egress nothing restricts.
	web := k.RunPod(t, busyboxPod(t, k, ns, "web", "/bin/sh", "-c",
		"mkdir -p /tmp/www && echo hi-from-web > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"))
	k.RunPod(t, busyboxPod(t, k, ns, "client"))
	fetch := "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 " + web.Status.PodIP + " 8080"
	if out := k.Exec(t, ns, "client", "main", "/bin/sh", "-c", fetch); !strings.Contains(out, "hi-from-web") {
		t.Fatalf("the unrestricted client cannot reach the web pod: %q", out)
	}

	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	start := time.Now()
	got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: map[string]any{
		"image": img.Ref, "kubeconfig": kubeconfig, "memory": "1Gi", "cpus": "1", "metrics": true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("provisioned in %v (up to its MCP initialize answering)", time.Since(start).Round(time.Millisecond))
	if !strings.HasPrefix(got.Endpoint, "http://127.0.0.1:") || len(got.Token) != 64 || got.Details["namespace"] != ns {
		t.Fatalf("Provision: %+v", got)
	}
	cs := mcptest.Connect(t, got.Endpoint, got.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "hello.txt", "content": "from the agent\n"})
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "hello.txt"}); !strings.Contains(out, "from the agent") {
		t.Errorf("Read: %q", out)
	}
	out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "id -u; cat hello.txt; ls /var/run/secrets/kubernetes.io 2>&1 | head -1"})
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || lines[0] != "65532" || lines[1] != "from the agent" ||
		!strings.Contains(lines[2], "No such file") {
		t.Errorf("Bash (uid, the workspace, no service account token): %q", out)
	}
	// Egress is denied: the web pod the client reaches is out of reach,
	// and so is the API server.
	for _, addr := range []string{web.Status.PodIP + "/8080", "10.96.0.1/443"} {
		out, _ := mcptest.Call(t, cs, "Bash", map[string]any{"command": "timeout 5 bash -c 'exec 3<>/dev/tcp/" + addr + "' && echo REACHED || echo blocked"})
		if !strings.Contains(out, "blocked") || strings.Contains(out, "REACHED") {
			t.Errorf("from inside the sandbox, %s: %q; want blocked", addr, out)
		}
	}
	if out := k.Exec(t, ns, "client", "main", "/bin/sh", "-c", fetch); !strings.Contains(out, "hi-from-web") {
		t.Errorf("the unrestricted client no longer reaches the web pod: %q", out)
	}
	// What the agent did shows in sandboxd's metrics, scraped through the
	// port the provider forwards to the Service's metrics port.
	scrape := scrapetest.Get(t, got.Details["metrics"])
	for _, want := range []string{
		`sandboxd_tool_calls_total{tool="Write"} 1`,
		`sandboxd_tool_calls_total{tool="Bash"} 3`,
	} {
		if !strings.Contains(scrape, want) {
			t.Errorf("metrics: no %q in the scrape of %s:\n%s", want, got.Details["metrics"], scrape)
		}
	}
	if list, _ := p.List(ctx, plugin.ListOptions{}); len(list) != 1 || list[0].ID != got.ID || list[0].Token != "" {
		t.Errorf("List: %+v", list)
	}

	if err := p.Release(ctx, got.ID, plugin.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if left := objectsOf(t, k, ns, got.ID); len(left) > 0 {
		t.Errorf("left after Release: %v", left)
	}
}

// TestProvisionErrors: what is wrong is named, with its kind, and a
// failed Provision leaves nothing.
func TestProvisionErrors(t *testing.T) {
	k := kubecluster.Shared(t)
	ns := k.Namespace(t)
	kubeconfig := k.CodegenKubeconfig(t, ns)
	nothing := k.RoleKubeconfig(t, ns, "nothing")
	p := NewProvider(nil)
	t.Cleanup(func() { _ = p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		kind sandbox.Kind
		says string
	}{
		// A tag that is not on the node, which no registry can give.
		{"image missing", map[string]any{"image": "promptkit-test/no-such-image:1", "kubeconfig": kubeconfig}, sandbox.KindStart, "the container cannot start"},
		{"forbidden", map[string]any{"kubeconfig": nothing}, sandbox.KindStart, "forbidden"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			_, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: tc.cfg})
			if err == nil || sandbox.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err %v (kind %s); want %s saying %q", err, sandbox.KindOf(err), tc.kind, tc.says)
			}
			if left := objectsOf(t, k, ns, ""); len(left) > 0 {
				t.Errorf("left after the failed Provision: %v", left)
			}
		})
	}
	// No node has the memory: the Pod is never scheduled, and a Provision
	// that runs out of time says why, not only that sandboxd was silent.
	t.Run("unschedulable", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := p.Provision(short, plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: map[string]any{
			"kubeconfig": kubeconfig, "memory": "4000Gi"}})
		if err == nil || sandbox.KindOf(err) != sandbox.KindTimeout || !strings.Contains(err.Error(), "the Pod is not scheduled (Unschedulable)") {
			t.Fatalf("err %v (kind %s); want a timeout saying the Pod is not scheduled", err, sandbox.KindOf(err))
		}
		t.Logf("Provision said: %v", err)
		if left := objectsOf(t, k, ns, ""); len(left) > 0 {
			t.Errorf("left after the failed Provision: %v", left)
		}
	})
	if _, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "code", Mode: Mode, Workspace: "/srv/x", Config: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), "workspace_pvc") {
		t.Errorf("a host workspace: %v", err)
	}
}

// busyboxPod is a pod of one busybox container, "main".
func busyboxPod(t *testing.T, k *kubecluster.Cluster, ns, name string, command ...string) *corev1.Pod {
	t.Helper()
	if len(command) == 0 {
		command = []string{"sleep", "3600"}
	}
	grace := int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "main", Image: k.Image(t, dockertest.Busybox),
				ImagePullPolicy: corev1.PullNever, Command: command}},
		},
	}
}

// objectsOf lists the sandbox objects in ns (of one id, or of any).
func objectsOf(t *testing.T, k *kubecluster.Cluster, ns, id string) []string {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: LabelMode + "=" + Mode}
	if id != "" {
		sel.LabelSelector += "," + LabelID + "=" + id
	}
	var left []string
	pods, err := k.Client.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range pods.Items {
		left = append(left, "pod/"+o.Name)
	}
	secrets, err := k.Client.CoreV1().Secrets(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range secrets.Items {
		left = append(left, "secret/"+o.Name)
	}
	svcs, err := k.Client.CoreV1().Services(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range svcs.Items {
		left = append(left, "service/"+o.Name)
	}
	nps, err := k.Client.NetworkingV1().NetworkPolicies(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range nps.Items {
		left = append(left, "networkpolicy/"+o.Name)
	}
	leases, err := k.Client.CoordinationV1().Leases(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range leases.Items {
		left = append(left, "lease/"+o.Name)
	}
	return left
}

// TestKilledPluginsSandboxesAreSwept: a plugin that stops renewing its
// sandboxes' Leases (it was killed) has them deleted by the next
// Provision in the namespace, by another plugin, once they expire; a
// live plugin's sandbox stays and answers.
func TestKilledPluginsSandboxesAreSwept(t *testing.T) {
	k := kubecluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	img := imageOnNode(ctx, t, k)
	ns := k.Namespace(t)
	// Three sandboxes on one small node: small ones.
	spec := plugin.ProvisionSpec{Name: "code", Mode: Mode, Config: map[string]any{
		"image": img.Ref, "kubeconfig": k.CodegenKubeconfig(t, ns), "memory": "512Mi", "cpus": "250m",
	}}

	// The killed plugin renews nothing: its Lease expires a second after
	// the provision.
	dead := NewProvider(nil)
	dead.leases.renew, dead.leases.duration = time.Hour, time.Second
	t.Cleanup(func() { _ = dead.Close() })
	lost, err := dead.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	live := NewProvider(nil)
	live.leases.renew, live.leases.duration = 200*time.Millisecond, 3*time.Second
	t.Cleanup(func() { _ = live.Close() })
	kept, err := live.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second) // past both durations: only renewals keep a Lease
	next, err := live.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		left := objectsOf(t, k, ns, lost.ID)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed plugin's sandbox is still there two minutes after the sweep: %v", left)
		}
	}
	for _, p := range []plugin.Provisioned{kept, next} {
		if left := objectsOf(t, k, ns, p.ID); len(left) != 5 {
			t.Errorf("the live plugin's sandbox %s: objects %v, want its five", p.ID, left)
		}
		cs := mcptest.Connect(t, p.Endpoint, p.Token)
		if out := mcptest.CallText(t, cs, "Bash", map[string]any{"command": "echo alive"}); strings.TrimSpace(out) != "alive" {
			t.Errorf("sandbox %s after the sweep: %q", p.ID, out)
		}
		if err := live.Release(ctx, p.ID, plugin.ReleaseOptions{}); err != nil {
			t.Error(err)
		}
	}
	if left := objectsOf(t, k, ns, ""); len(left) > 0 {
		t.Errorf("left after the releases: %v", left)
	}
}

// imageOnNode builds the real sandboxd image of langs (none: the
// default, Go) when the engine lacks it and imports it into the
// cluster's node.
func imageOnNode(ctx context.Context, t testing.TB, k *kubecluster.Cluster, langs ...string) sandboxdimage.Result {
	t.Helper()
	img, err := sandboxdimage.Ensure(ctx, sandboxdimage.Options{Languages: langs})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := k.ImportImage(ctx, img.Ref); err != nil {
		t.Fatal(err)
	}
	t.Logf("imported %s into the node in %v", img.Ref, time.Since(start).Round(time.Millisecond))
	return img
}
