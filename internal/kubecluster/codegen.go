package kubecluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// CodegenKubeconfig applies deploy/kubernetes/codegen's RBAC, the access
// the kubectl_codegen provider documents, to namespace ns, and returns a
// kubeconfig of its service account: what a provider under test runs as.
func (c *Cluster) CodegenKubeconfig(t testing.TB, ns string) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", "deploy", "kubernetes", "codegen", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(c.Kubectl, "--kubeconfig", c.Kubeconfig, "apply", "--validate=strict", "-f", "-")
	cmd.Stdin = strings.NewReader(strings.ReplaceAll(string(data), "namespace: promptkit\n", "namespace: "+ns+"\n"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply rbac.yaml: %v\n%s", err, out)
	}
	return c.TokenKubeconfig(t, ns, "promptkit-codegen")
}
