package kubetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// streamTimeout bounds how long the client has to open its streams.
const streamTimeout = 10 * time.Second

// exec serves pods/exec over SPDY (remote command protocol v4: exit codes
// on the error stream). A WebSocket upgrade is refused, so clients fall
// back to SPDY as they do with API servers that lack WebSocket exec.
// The command runs in the pod's container through docker exec.
func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	q := r.URL.Query()
	s.mu.Lock()
	pod := s.pods[ns+"/"+name]
	var containerID string
	if pod != nil {
		containerID = containerOf(pod, q.Get("container"))
	}
	s.mu.Unlock()
	switch {
	case pod == nil:
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("pods %q not found", name),
			&metav1.StatusDetails{Name: name, Kind: "pods"})
		return
	case pod.Status.Phase != corev1.PodRunning:
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, fmt.Sprintf(
			"unable to upgrade connection: pod %s is not running (phase %s)", name, pod.Status.Phase), nil)
		return
	case containerID == "":
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, fmt.Sprintf(
			"container %s is not valid for pod %s", q.Get("container"), name), nil)
		return
	case strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		http.Error(w, "websocket exec is not served here", http.StatusBadRequest)
		return
	}
	if _, err := httpstream.Handshake(r, w, []string{remotecommand.StreamProtocolV4Name}); err != nil {
		return // Handshake has answered
	}
	want := map[string]bool{corev1.StreamTypeError: true}
	for _, k := range []string{"stdin", "stdout", "stderr"} {
		if q.Get(k) == "true" || q.Get(k) == "1" {
			want[k] = true
		}
	}
	streamCh := make(chan httpstream.Stream, 8)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(st httpstream.Stream, _ <-chan struct{}) error {
		streamCh <- st
		return nil
	})
	if conn == nil {
		return // UpgradeResponse has answered
	}
	defer conn.Close()
	conn.SetIdleTimeout(time.Minute)
	streams := map[string]httpstream.Stream{}
	timeout := time.After(streamTimeout)
	for len(streams) < len(want) {
		select {
		case st := <-streamCh:
			streams[st.Headers().Get(corev1.StreamType)] = st
		case <-timeout:
			return
		}
	}
	code, err := runInContainer(containerID, q["command"], streams)
	writeExitStatus(streams[corev1.StreamTypeError], code, err)
}

// containerOf is the Docker container of the named container of pod (or
// of its first when name is empty).
func containerOf(pod *corev1.Pod, name string) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if name == "" || cs.Name == name {
			return strings.TrimPrefix(cs.ContainerID, "docker://")
		}
	}
	return ""
}

func runInContainer(id string, command []string, streams map[string]httpstream.Stream) (int, error) {
	args := []string{"exec"}
	if streams[corev1.StreamTypeStdin] != nil {
		args = append(args, "-i")
	}
	cmd := exec.Command("docker", append(append(args, id), command...)...)
	if st := streams[corev1.StreamTypeStdin]; st != nil {
		cmd.Stdin = st
	}
	if st := streams[corev1.StreamTypeStdout]; st != nil {
		cmd.Stdout = st
	} else {
		cmd.Stdout = io.Discard
	}
	if st := streams[corev1.StreamTypeStderr]; st != nil {
		cmd.Stderr = st
	} else {
		cmd.Stderr = io.Discard
	}
	err := cmd.Run()
	for _, k := range []string{corev1.StreamTypeStdout, corev1.StreamTypeStderr} {
		if st := streams[k]; st != nil {
			_ = st.Close()
		}
	}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		return xe.ExitCode(), nil
	}
	return 0, err
}

// writeExitStatus reports the command's end on the error stream, as the
// kubelet does in protocol v4.
func writeExitStatus(st httpstream.Stream, code int, err error) {
	if st == nil {
		return
	}
	defer st.Close()
	status := metav1.Status{Status: metav1.StatusSuccess}
	switch {
	case err != nil:
		status = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
	case code != 0:
		status = metav1.Status{
			Status:  metav1.StatusFailure,
			Reason:  remotecommand.NonZeroExitCodeReason,
			Message: fmt.Sprintf("command terminated with non-zero exit code: exit status %d", code),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
				Type: remotecommand.ExitCodeCauseType, Message: strconv.Itoa(code),
			}}},
		}
	}
	out, _ := json.Marshal(status)
	_, _ = st.Write(out)
}
