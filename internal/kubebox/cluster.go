package kubebox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// cluster is how the plugin reaches the API server: client-go (native)
// or the kubectl binary (cli). Both make the same calls, the ones the
// Role in deploy/kubernetes grants (Calls).
type cluster interface {
	// getPod and listPods return the pod(s) or an *apiError.
	getPod(ctx context.Context, ns, name string) (*corev1.Pod, error)
	listPods(ctx context.Context, ns string, sel labels.Selector) ([]corev1.Pod, error)
	// exec runs argv in the target with the three streams attached and
	// returns the remote process's exit code. An error means the exit
	// code is unknown: the exec was refused, the connection failed or
	// ctx ended. msg is what the client said besides the streams (the
	// kubectl binary's own stderr), for errors.
	exec(ctx context.Context, t target, argv []string, stdin io.Reader, stdout, stderr io.Writer) (code int, err error)
	// server names the API endpoint, for errors.
	server() string
	close()
}

// Calls are the API requests the plugin makes, as RBAC verb and
// resource: a Role granting them is enough (deploy/kubernetes/rbac.yaml).
var Calls = []struct{ Verb, Resource string }{
	{"get", "pods"},         // a named pod, and the diagnosis of a failed exec
	{"list", "pods"},        // a selector's pods
	{"create", "pods/exec"}, // every call; WebSocket exec is authorized as create too
}

// target is where a call runs.
type target struct {
	ns, pod, container string
}

func (t target) String() string {
	return fmt.Sprintf("pod %s (namespace %s, container %s)", t.pod, t.ns, t.container)
}

// apiReason classifies an API failure.
type apiReason int

const (
	apiOther apiReason = iota
	apiNotFound
	apiForbidden
	apiUnauthorized
	apiUnreachable
	// apiNoStart: the container runtime could not start the process
	// (runc's "OCI runtime exec failed ... no such file or directory"):
	// the target cannot run it, nothing ran.
	apiNoStart
)

// runtimeExecFailed reports whether msg is a container runtime's refusal
// to start an exec's process: a real runtime answers a missing binary so,
// with exit code 1 or an Internal error status, not with 126 or 127.
func runtimeExecFailed(msg string) bool {
	return strings.Contains(msg, "OCI runtime exec failed") || strings.Contains(msg, "unable to start container process") ||
		strings.Contains(msg, "failed to start exec")
}

// apiError is a failed API request, classified the same way for both
// transports.
type apiError struct {
	reason apiReason
	msg    string
	err    error
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.err }

func reasonOf(err error) apiReason {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.reason
	}
	return apiOther
}
