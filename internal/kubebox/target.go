package kubebox

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/altairalabs/promptkit-sandbox/internal/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// defaultContainerAnnotation names a pod's default container, as kubectl
// honours it.
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// resolve finds where calls run: the named pod, or the oldest Running
// and Ready pod the selector matches.
func (s *Sandbox) resolve(ctx context.Context) (target, error) {
	if s.set.selector == nil {
		pod, err := s.c.getPod(ctx, s.ns, s.set.pod)
		if err != nil {
			return target{}, s.podErr(s.set.pod, err)
		}
		return s.targetOf(pod, false)
	}
	pods, err := s.c.listPods(ctx, s.ns, s.set.selector)
	if err != nil {
		return target{}, s.apiErr(fmt.Sprintf("pods matching %q in namespace %s", s.set.selector, s.ns), err)
	}
	sort.Slice(pods, func(i, j int) bool {
		a, b := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return pods[i].Name < pods[j].Name
	})
	var why []string
	for i := range pods {
		t, err := s.targetOf(&pods[i], true)
		if err == nil {
			return t, nil
		}
		why = append(why, err.Error())
	}
	msg := fmt.Sprintf("no Running and Ready pod in namespace %s matches selector %q", s.ns, s.set.selector)
	if len(why) > 0 {
		if len(why) > 5 {
			why = append(why[:5], fmt.Sprintf("and %d more", len(why)-5))
		}
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return target{}, sandbox.NewError(sandbox.KindStart, msg, nil)
}

// targetOf checks that calls can run in pod: it runs, is not going away,
// has the container and the container runs.
func (s *Sandbox) targetOf(pod *corev1.Pod, needReady bool) (target, error) {
	t := target{ns: pod.Namespace, pod: pod.Name, container: s.set.container}
	if t.ns == "" {
		t.ns = s.ns
	}
	fail := func(format string, args ...any) (target, error) {
		return target{}, sandbox.NewError(sandbox.KindStart,
			fmt.Sprintf("pod %s in namespace %s ", t.pod, t.ns)+fmt.Sprintf(format, args...), nil)
	}
	switch {
	case pod.DeletionTimestamp != nil:
		return fail("is terminating")
	case pod.Status.Phase != corev1.PodRunning:
		return fail("is not running (phase %s)", phaseOf(pod))
	case needReady && !ready(pod):
		return fail("is not Ready")
	}
	var names []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	if t.container == "" {
		t.container = pod.Annotations[defaultContainerAnnotation]
		if t.container == "" && len(names) > 0 {
			t.container = names[0]
		}
	}
	found := false
	for _, n := range names {
		found = found || n == t.container
	}
	if !found {
		return fail("has no container %q (its containers: %s)", t.container, strings.Join(names, ", "))
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != t.container || cs.State.Running != nil {
			continue
		}
		state := "not started"
		if w := cs.State.Waiting; w != nil {
			state = "waiting: " + w.Reason
		} else if x := cs.State.Terminated; x != nil {
			state = fmt.Sprintf("terminated: %s, exit code %d", x.Reason, x.ExitCode)
		}
		return fail("has container %s, but it is not running (%s)", t.container, state)
	}
	return t, nil
}

func phaseOf(pod *corev1.Pod) string {
	if pod.Status.Phase == "" {
		return "unknown"
	}
	return string(pod.Status.Phase)
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podErr turns a failed request about the named pod into the sandbox's
// error.
func (s *Sandbox) podErr(name string, err error) error {
	if reasonOf(err) == apiNotFound {
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("pod %s not found in namespace %s", name, s.ns), nil)
	}
	return s.apiErr(fmt.Sprintf("pod %s in namespace %s", name, s.ns), err)
}

// apiErr classifies a failed API request about what: refusals are
// could-not-start errors, a server that does not answer a transport error.
func (s *Sandbox) apiErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var se *sandbox.Error
	if errors.As(err, &se) {
		return err
	}
	switch reasonOf(err) {
	case apiForbidden:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: forbidden by the API server's authorization (RBAC): %s "+
			"(kubectl_exec needs get and list on pods and create on pods/exec: see deploy/kubernetes/rbac.yaml)", what, err), nil)
	case apiUnauthorized, apiNotFound:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: %s", what, err), nil)
	case apiNoStart:
		return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: the container runtime could not start it (kubectl_exec needs %s): %s",
			what, remoteproc.Requirement, err), nil)
	case apiUnreachable:
		return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s: %s", what, err), nil)
	}
	return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s: API server %s: %s", what, s.c.server(), err), nil)
}
