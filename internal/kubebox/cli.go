package kubebox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// cli runs the kubectl binary for every request, as the reference
// backend does: kubectl_path, kubeconfig, context and extra_args apply to
// each. Its stderr is kubectl's own words and is never the hook's.
type cli struct {
	path   string
	global []string // flags before the subcommand
	host   string   // the API server, for errors
}

func newCLI(set settings, host string) (*cli, error) {
	path, err := exec.LookPath(set.kubectlPath)
	if err != nil {
		return nil, fmt.Errorf("config: key %q: kubectl binary %q: %w", "kubectl_path", set.kubectlPath, err)
	}
	var global []string
	if set.kubeconfig != "" {
		global = append(global, "--kubeconfig", set.kubeconfig)
	}
	if set.context != "" {
		global = append(global, "--context", set.context)
	}
	global = append(global, set.extraArgs...)
	return &cli{path: path, global: global, host: host}, nil
}

func (c *cli) server() string { return c.host }
func (c *cli) close()         {}

// run runs kubectl with the sandbox's global flags, in namespace ns,
// through shared/shell (its own process group, killed with it when ctx
// ends) and returns its exit status; an error when it could not run or
// ctx ended.
func (c *cli) run(ctx context.Context, ns string, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	argv := append(append(append([]string{}, c.global...), "--namespace", ns), args...)
	logs := newKubectlLogFilter(stderr)
	p, err := shell.StartClient(ctx, c.path, argv, nil, stdin, stdout, logs)
	if err != nil {
		logs.SetPID(0)
		if ctx.Err() == nil {
			return 0, fmt.Errorf("run %s: %w", c.path, err)
		}
		return 0, err
	}
	logs.SetPID(p.Pid())
	code, err := shell.ClientExit(ctx, p)
	_ = logs.Flush()
	if err != nil && ctx.Err() == nil {
		return 0, fmt.Errorf("run %s: %w", c.path, err)
	}
	return code, err
}

// get runs a kubectl get and decodes its JSON output into v.
func (c *cli) get(ctx context.Context, ns string, v any, args ...string) error {
	var stdout, stderr bytes.Buffer
	code, err := c.run(ctx, ns, append([]string{"get", "--output", "json"}, args...), nil, &stdout, &stderr)
	if err != nil {
		return err
	}
	if code != 0 {
		return c.kubectlErr(fmt.Errorf("kubectl exited %d", code), stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		return fmt.Errorf("kubectl get %s: decode its output: %w", strings.Join(args, " "), err)
	}
	return nil
}

func (c *cli) getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	var pod corev1.Pod
	if err := c.get(ctx, ns, &pod, "pod", name); err != nil {
		return nil, err
	}
	return &pod, nil
}

func (c *cli) listPods(ctx context.Context, ns string, sel labels.Selector) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := c.get(ctx, ns, &list, "pods", "--selector", sel.String()); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// exec returns kubectl's exit code, which is the remote command's when
// the command ran; the wrapper's lines tell the two apart.
func (c *cli) exec(ctx context.Context, t target, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	args := []string{"exec", t.pod, "--container", t.container}
	if stdin != nil {
		args = append(args, "--stdin")
	}
	return c.run(ctx, t.ns, append(append(args, "--"), argv...), stdin, stdout, stderr)
}

// kubectlErr classifies a failed kubectl by what it printed.
func (c *cli) kubectlErr(err error, stderr string) error {
	msg := lastLine(stderr)
	if msg == "" {
		msg = err.Error()
	}
	return messageErr(c.host, msg, err)
}

// messageErr is the apiError a client's one-line message (kubectl's
// verdict) describes; host names the API server it failed to reach.
func messageErr(host, msg string, err error) *apiError {
	reason := kubectlReason(msg)
	if reason == apiUnreachable {
		msg = fmt.Sprintf("API server %s unreachable: %s", host, msg)
	}
	return &apiError{reason: reason, msg: msg, err: err}
}

// lastLine is kubectl's verdict: the last line it printed (klog lines
// before it repeat the same failure), capped.
func lastLine(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	msg := strings.TrimSpace(lines[len(lines)-1])
	if len(msg) > 1024 {
		msg = msg[:1024] + "..."
	}
	return msg
}

// kubectlReason reads the reason out of kubectl's message: "Error from
// server (NotFound): ...", or a connection failure.
func kubectlReason(msg string) apiReason {
	switch {
	case runtimeExecFailed(msg):
		return apiNoStart
	case strings.Contains(msg, "(NotFound)"):
		return apiNotFound
	case strings.Contains(msg, "(Forbidden)"), strings.Contains(msg, " is forbidden: "):
		return apiForbidden
	case strings.Contains(msg, "(Unauthorized)"), strings.Contains(msg, "You must be logged in"):
		return apiUnauthorized
	case strings.Contains(msg, "Unable to connect to the server"), strings.Contains(msg, "was refused"),
		strings.Contains(msg, "dial tcp"), strings.Contains(msg, "no such host"), strings.Contains(msg, "i/o timeout"):
		return apiUnreachable
	}
	return apiOther
}
