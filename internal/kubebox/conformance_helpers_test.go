package kubebox_test

import (
	"context"
	"maps"
	"os/exec"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/kubebox"
	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// The pod and container the calls run in.
const (
	conformancePod       = "hooks-0"
	conformanceContainer = "hooks"
)

// conformanceOpener opens a kubectl_exec sandbox: through the Factory,
// or through the plugin binary.
type conformanceOpener func(t *testing.T, cfg map[string]any) sandbox.Sandbox

func conformanceInProcess(t *testing.T, cfg map[string]any) sandbox.Sandbox {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sandboxtest.OpenTimeout)
	defer cancel()
	sb, err := kubebox.Factory(ctx, "conformance", cfg)
	if err != nil {
		t.Fatalf("Factory: %v", err)
	}
	return sb
}

// conformancePlugin builds the plugin binary into a directory of its own
// and returns an opener that has a plugin host, which discovers and
// starts that binary, open the sandboxes. The host stops the plugin when
// t ends.
func conformancePlugin(t *testing.T) conformanceOpener {
	t.Helper()
	open := plugintest.Host(t, "promptkit-sandbox-kubectl", "../../cmd/promptkit-sandbox-kubectl")
	return func(t *testing.T, cfg map[string]any) sandbox.Sandbox {
		t.Helper()
		return open(t, "conformance", kubebox.Mode, cfg)
	}
}

// conformanceCell is a kubectl_exec cell: a namespace of its own in the
// real cluster, with one pod of the busybox image (its containers sharing
// the pod's process namespace, so that the pause process reaps orphans as
// a container's init would), made when the cell first opens a sandbox.
func conformanceCell(name string, open conformanceOpener, cfg map[string]any) sandboxtest.Cell {
	var once sync.Once
	var kubeconfig string
	return sandboxtest.Cell{
		Name: name,
		Open: func(t *testing.T, extra map[string]any) sandbox.Sandbox {
			if cfg["transport"] == kubebox.TransportCLI {
				conformanceNeedKubectl(t)
			}
			once.Do(func() {
				k := kubecluster.Shared(t)
				ns := k.Namespace(t)
				grace, share := int64(1), true
				k.RunPod(t, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: conformancePod, Namespace: ns, Labels: map[string]string{"app": "hooks"}},
					Spec: corev1.PodSpec{
						TerminationGracePeriodSeconds: &grace,
						ShareProcessNamespace:         &share,
						Containers: []corev1.Container{{
							Name: conformanceContainer, Image: k.Image(t, dockertest.Busybox), ImagePullPolicy: corev1.PullNever,
							Command: []string{"sleep", "3600"},
						}},
					},
				})
				kubeconfig = k.KubeconfigIn(t, ns)
			})
			if kubeconfig == "" {
				t.Fatal("the cell's pod did not start")
			}
			full := map[string]any{"kubeconfig": kubeconfig, "pod": conformancePod, "container": conformanceContainer}
			maps.Copy(full, cfg)
			maps.Copy(full, extra)
			return open(t, full)
		},
		// Killing a call's processes takes a second exec (through kubectl
		// for the cli transport), which takes seconds on a busy machine.
		Options: sandboxtest.Options{KillTimeout: 3 * time.Second, Slack: 20 * time.Second},
	}
}

// conformanceNeedKubectl skips a test of the cli transport where there is
// no kubectl, unless CI is set: there the kubectl tests must run.
func conformanceNeedKubectl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		ci.Skipf(t, "kubectl is not on PATH (make test installs one): %v", err)
	}
}
