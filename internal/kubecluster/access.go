package kubecluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigIn writes a copy of the admin kubeconfig whose context
// defaults to namespace ns, as a user's kubeconfig would, into a
// directory the test removes.
func (c *Cluster) KubeconfigIn(t testing.TB, ns string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatalf("reading the admin kubeconfig: %v", err)
	}
	cur, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		t.Fatalf("the admin kubeconfig has no context %q", cfg.CurrentContext)
	}
	cur.Namespace = ns
	return saveKubeconfig(t, cfg)
}

// Rule is one RBAC rule in the core API group: resource (with its
// subresource, as "pods/exec") and verbs.
type Rule struct {
	Resource string
	Verbs    []string
}

// RoleKubeconfig creates, in ns, a service account allowed exactly rules
// (a Role and its RoleBinding) and writes a kubeconfig that authenticates
// as it with a bound token, context namespace ns. They go with the
// namespace.
func (c *Cluster) RoleKubeconfig(t testing.TB, ns, name string, rules ...Rule) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service account %s/%s: %v", ns, name, err)
	}
	if len(rules) > 0 {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		for _, r := range rules {
			role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{r.Resource}, Verbs: r.Verbs})
		}
		if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating role %s/%s: %v", ns, name, err)
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
		}
		if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating role binding %s/%s: %v", ns, name, err)
		}
	}
	return c.TokenKubeconfig(t, ns, name)
}

// TokenKubeconfig writes a kubeconfig that authenticates as the service
// account ns/name (which must exist) with a bound token of an hour,
// context namespace ns.
func (c *Cluster) TokenKubeconfig(t testing.TB, ns, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hour := int64(3600)
	tok, err := c.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for service account %s/%s: %v", ns, name, err)
	}
	admin, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatalf("reading the admin kubeconfig: %v", err)
	}
	cur := admin.Contexts[admin.CurrentContext]
	if cur == nil || admin.Clusters[cur.Cluster] == nil {
		t.Fatalf("the admin kubeconfig has no cluster for context %q", admin.CurrentContext)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubecluster"] = admin.Clusters[cur.Cluster]
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "kubecluster", AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = name
	return saveKubeconfig(t, cfg)
}

func saveKubeconfig(t testing.TB, cfg *clientcmdapi.Config) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatalf("writing a kubeconfig: %v", err)
	}
	return path
}

// Exec runs argv in a pod's container with the cluster's kubectl, as an
// administrator, and returns its stdout; a failure fails the test.
func (c *Cluster) Exec(t testing.TB, ns, pod, container string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"--kubeconfig", c.Kubeconfig, "-n", ns, "exec", pod, "-c", container, "--"}, argv...)
	cmd := exec.CommandContext(ctx, c.Kubectl, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl exec %s -c %s -- %s: %v\n%s", pod, container, strings.Join(argv, " "), err, stderr.String())
	}
	return stdout.String()
}

// DeletePod deletes a pod and waits until it is gone. It keeps the pod's
// grace period: with none the API forgets the pod at once while its
// containers still run, and a test that wants the pod gone wants them
// gone.
func (c *Cluster) DeletePod(t testing.TB, ns, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods := c.Client.CoreV1().Pods(ns)
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting pod %s/%s: %v", ns, name, err)
	}
	err := waitFor(ctx, "pod "+name+" to go", func(ctx context.Context) error {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Unschedulable makes a pod stay Pending: it asks for a node that does
// not exist.
func Unschedulable(pod *corev1.Pod) *corev1.Pod {
	pod.Spec.NodeSelector = map[string]string{"promptkit-sandbox.test/no-such-node": "true"}
	return pod
}

// CreatePod creates a pod without waiting for it to run (RunPod waits).
func (c *Cluster) CreatePod(t testing.TB, pod *corev1.Pod) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}
