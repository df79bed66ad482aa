package kubebox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// native reaches the API server with client-go: one client per sandbox,
// exec streams over WebSocket (v5.channel.k8s.io) with SPDY as the
// fallback, as kubectl does.
type native struct {
	cfg    *rest.Config
	pods   corev1client.CoreV1Interface
	params runtime.ParameterCodec
	// spdyOnly is set once the server refused a WebSocket upgrade: later
	// calls go straight to SPDY instead of paying for the refusal again.
	spdyOnly atomic.Bool
}

// loadConfig reads the client configuration the way kubectl does (the
// kubeconfig key, else $KUBECONFIG, else ~/.kube/config), falling back to
// the in-cluster service account when there is none, and returns it with
// the namespace it names.
func loadConfig(set settings) (*rest.Config, string, error) {
	return ClientConfig(set.kubeconfig, set.context)
}

// ClientConfig loads the client configuration as kubectl does: kubeconfig
// (or $KUBECONFIG, ~/.kube/config, or the pod's service account in a
// cluster) at context (or its current one); it returns the namespace that
// configuration names.
func ClientConfig(kubeconfig, kubeContext string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("load Kubernetes client configuration: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("load Kubernetes client configuration: namespace: %w", err)
	}
	return cfg, ns, nil
}

func newNative(cfg *rest.Config, version string) (*native, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "promptkit-sandbox-kubectl/" + version
	// The client's own rate limit would queue calls behind one another;
	// the API server's flow control is the one that should decide.
	cfg.QPS, cfg.Burst = -1, 0
	pods, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return &native{cfg: cfg, pods: pods, params: runtime.NewParameterCodec(scheme)}, nil
}

func (n *native) server() string { return n.cfg.Host }
func (n *native) close()         {}

func (n *native) getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	pod, err := n.pods.Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, n.apiErr(err)
	}
	return pod, nil
}

func (n *native) listPods(ctx context.Context, ns string, sel labels.Selector) ([]corev1.Pod, error) {
	list, err := n.pods.Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, n.apiErr(err)
	}
	return list.Items, nil
}

func (n *native) exec(ctx context.Context, t target, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	u := n.pods.RESTClient().Post().Namespace(t.ns).Resource("pods").Name(t.pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: t.container, Command: argv, Stdin: stdin != nil, Stdout: true, Stderr: true,
		}, n.params).URL()
	ex, err := n.executor(u)
	if err != nil {
		return 0, err
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	var ee utilexec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitStatus(), nil
	}
	return 0, n.apiErr(err)
}

func (n *native) executor(u *url.URL) (remotecommand.Executor, error) {
	return NewExecutor(n.cfg, u, &n.spdyOnly)
}

// apiErr classifies a client-go error.
func (n *native) apiErr(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var status apierrors.APIStatus
	switch {
	case apierrors.IsNotFound(err):
		return &apiError{apiNotFound, err.Error(), err}
	case apierrors.IsForbidden(err):
		return &apiError{apiForbidden, err.Error(), err}
	case apierrors.IsUnauthorized(err):
		return &apiError{apiUnauthorized, "unauthorized: the credentials were refused: " + err.Error(), err}
	case runtimeExecFailed(err.Error()):
		return &apiError{apiNoStart, err.Error(), err}
	case errors.As(err, &status):
		return &apiError{apiOther, err.Error(), err}
	}
	if r := kubectlReason(err.Error()); r == apiForbidden || r == apiUnauthorized {
		// An exec refused before the upgrade says so only in words.
		return &apiError{r, err.Error(), err}
	}
	var ne net.Error
	var oe *net.OpError
	var ue *url.Error
	if errors.As(err, &oe) || errors.As(err, &ne) || errors.As(err, &ue) {
		return &apiError{apiUnreachable, fmt.Sprintf("API server %s unreachable: %v", n.cfg.Host, err), err}
	}
	return &apiError{apiOther, err.Error(), err}
}
