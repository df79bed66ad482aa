package arena_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecodegen"
)

// TestArenaSessionsOnKubernetes is TestArenaSessionsOnDocker on the real
// cluster: each session's sandbox is a pod of its own (kubectl_codegen,
// as the service account deploy/kubernetes/codegen makes), on a fresh
// workspace the provider makes (source_args name none), which holds
// only its session's files; run_tests gates the good sessions green and
// the bad ones red; once the run is over, before the source is closed,
// no object of the sandboxes is left in the namespace.
func TestArenaSessionsOnKubernetes(t *testing.T) {
	k := kubecluster.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	img := sandboxdImage(t)
	if err := k.ImportImage(ctx, img.Ref); err != nil {
		t.Fatal(err)
	}
	plugins := pluginDir(t, "kubectl")
	ns := k.Namespace(t)
	dir := t.TempDir()
	cfg := writeRuntimeConfig(t, dir, "code", fmt.Sprintf(
		"      mode: kubectl_codegen\n      image: %s\n      kubeconfig: %s\n      memory: 1Gi\n      cpus: \"1\"\n", img.Ref, k.CodegenKubeconfig(t, ns)))
	source, rec := newSource(t)
	kt := e2eKit(source, map[string]any{"config": cfg, "sandbox": "code", "plugin_dir": plugins}, nil)

	start := time.Now()
	results := runArena(t, kt.write(t, filepath.Join(dir, "kit")), e2eConcurrency, 20*time.Minute)
	t.Logf("%d sessions, %d at a time, ran in %v", len(e2eSessions), e2eConcurrency, time.Since(start).Round(time.Millisecond))

	checkE2EResults(t, results, rec)
	rec.checkOneSandboxPerSession(t, len(e2eSessions))
	// Deleting a sandbox's Secret takes its other objects with it
	// through the garbage collector, which may take a moment.
	var left string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		out, err := exec.Command(k.Kubectl, "--kubeconfig", k.Kubeconfig, "-n", ns, "get",
			"pods,secrets,services,networkpolicies.networking.k8s.io,leases.coordination.k8s.io",
			"-l", kubecodegen.LabelMode+"="+kubecodegen.Mode, "-o", "name").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get: %v\n%s", err, out)
		}
		if left = strings.TrimSpace(string(out)); left == "" || time.Now().After(deadline) {
			break
		}
	}
	if left != "" {
		t.Errorf("objects of the sandboxes left in %s:\n%s", ns, left)
	}
}
