package promptkit_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/AltairaLabs/PromptKit/sdk"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

// kubeCodegenEnv declares a kubectl_codegen sandbox on the real cluster:
// the real image imported into its node, a namespace of the test's own
// with the RBAC deploy/kubernetes/codegen grants, and a kubeconfig of
// that service account's token.
func kubeCodegenEnv(t *testing.T) (codegenEnv, *kubecluster.Cluster, string) {
	t.Helper()
	k := kubecluster.Shared(t)
	image := realImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := k.ImportImage(ctx, image); err != nil {
		t.Fatal(err)
	}
	ns := k.Namespace(t)
	kubeconfig := k.CodegenKubeconfig(t, ns)
	base := t.TempDir()
	e := codegenEnv{base: base, sandbox: "cg_" + randomHex(t)}
	e.cfg = writeFile(t, filepath.Join(base, "runtime.yaml"), fmt.Sprintf(`apiVersion: promptkit.altairalabs.ai/v1alpha1
kind: RuntimeConfig
spec:
  sandboxes:
    %s:
      mode: kubectl_codegen
      image: %s
      namespace: %s
      kubeconfig: %s
      memory: 1Gi
      cpus: "1"
`, e.sandbox, image, ns, kubeconfig))
	e.pack = writeFile(t, filepath.Join(base, "agent.pack.json"), codegenPack)
	return e, k, ns
}

// TestSDKCodegenAgentOnKubernetes is TestSDKCodegenAgentOnDocker with a
// kubectl_codegen sandbox on the real cluster: the same script, the same
// answers, the files in the pod's workspace, and the pod gone once the
// conversation closes.
func TestSDKCodegenAgentOnKubernetes(t *testing.T) {
	env, k, ns := kubeCodegenEnv(t)
	a := newAdapter(t, env.base, nil)
	if err := a.Register(nil); err != nil {
		t.Fatal(err)
	}
	model := newScriptedModel(agentScript()...)
	conv, err := sdk.Open(env.pack, "code", sdk.WithRuntimeConfig(env.cfg), sdk.WithProvider(model),
		a.MCPServer("codegen", promptkit.MCPOptions{Sandbox: env.sandbox}))
	if err != nil {
		t.Fatalf("sdk.Open: %v (last resolve error: %v)", err, a.LastCodegenError())
	}
	held := a.CodegenSandboxes()
	if len(held) != 1 || held[0].Instance == "" {
		t.Fatalf("held %v; want one sandbox naming its pod", held)
	}
	pod := held[0].Instance
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	resp, err := conv.Send(ctx, "write calc, test it, break it")
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if resp.Text() != "done" {
		t.Errorf("final answer %q; want done", resp.Text())
	}
	checkAgentResults(t, model.Results())
	if got := k.Exec(t, ns, pod, "sandboxd", "cat", "/workspace/calc.go"); got != strings.Replace(calcGo, "a + b", "a - b", 1) {
		t.Errorf("calc.go in the pod:\n%s", got)
	}
	if err := conv.Close(); err != nil {
		t.Errorf("conv.Close: %v", err)
	}
	waitPodGone(t, k, ns, pod)
}

// waitPodGone waits until the pod no longer exists.
func waitPodGone(t *testing.T, k *kubecluster.Cluster, ns, pod string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := exec.Command(k.Kubectl, "--kubeconfig", k.Kubeconfig, "-n", ns, "get", "pod", pod, "--ignore-not-found", "-o", "name").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get pod: %v\n%s", err, out)
		}
		if strings.TrimSpace(string(out)) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s still there a minute after its conversation closed", pod)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
