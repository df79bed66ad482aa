package kubetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// streamTimeout bounds how long the client has to open its streams.
const streamTimeout = 10 * time.Second

// exec serves pods/exec over WebSocket (v5.channel.k8s.io and v4, what
// kubectl 1.30+ tries first) or SPDY (v4.channel.k8s.io: exit codes on
// the error stream). The command runs in the pod's container through
// docker exec.
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
	case wsstream.IsWebSocketRequest(r):
		s.mu.Lock()
		refuse := s.refuseWS
		s.mu.Unlock()
		if refuse {
			s.served("websocket/refused")
			writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "WebSocket upgrades are not served here", nil)
			return
		}
		s.execWebSocket(w, r, containerID)
		return
	}
	protocol, err := httpstream.Handshake(r, w, []string{remotecommand.StreamProtocolV4Name})
	if err != nil {
		return // Handshake has answered
	}
	s.served("spdy/" + protocol)
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
	code, err := s.runInContainer(containerID, q["command"], asRWC(streams))
	writeExitStatus(streams[corev1.StreamTypeError], code, err)
}

// The channels of the WebSocket remote command protocols, by number.
const (
	chanStdin = iota
	chanStdout
	chanStderr
	chanError
	chanResize
)

// execWebSocket serves an exec over WebSocket: one binary channel per
// stream; in v5 the client half-closes stdin with a close signal.
func (s *Server) execWebSocket(w http.ResponseWriter, r *http.Request, containerID string) {
	q := r.URL.Query()
	kind := func(k string, use wsstream.ChannelType) wsstream.ChannelType {
		if q.Get(k) == "true" || q.Get(k) == "1" {
			return use
		}
		return wsstream.IgnoreChannel
	}
	channels := []wsstream.ChannelType{
		chanStdin:  kind("stdin", wsstream.ReadChannel),
		chanStdout: kind("stdout", wsstream.WriteChannel),
		chanStderr: kind("stderr", wsstream.WriteChannel),
		chanError:  wsstream.WriteChannel,
		chanResize: wsstream.IgnoreChannel,
	}
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		remotecommand.StreamProtocolV5Name: {Binary: true, Channels: channels},
		remotecommand.StreamProtocolV4Name: {Binary: true, Channels: channels},
	})
	conn.SetIdleTimeout(time.Minute)
	protocol, rwc, err := conn.Open(w, r)
	if err != nil {
		return
	}
	s.served("websocket/" + protocol)
	defer conn.Close()
	streams := map[string]io.ReadWriteCloser{corev1.StreamTypeError: rwc[chanError]}
	for name, i := range map[string]int{corev1.StreamTypeStdin: chanStdin, corev1.StreamTypeStdout: chanStdout, corev1.StreamTypeStderr: chanStderr} {
		if channels[i] != wsstream.IgnoreChannel {
			streams[name] = rwc[i]
		}
	}
	code, err := s.runInContainer(containerID, q["command"], streams)
	writeExitStatus(streams[corev1.StreamTypeError], code, err)
}

func (s *Server) served(protocol string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.execProtocols[protocol]++
}

// RefuseWebSockets makes the server answer WebSocket exec upgrades with
// 400 Bad Request, as an API server older than 1.30 or a proxy that
// blocks WebSockets does: a fault the real cluster (1.37, no proxy) does
// not produce, for the native transport's fallback to SPDY.
func (s *Server) RefuseWebSockets() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseWS = true
}

// ExecProtocols counts the exec sessions served, by transport and
// subprotocol ("websocket/v5.channel.k8s.io", "spdy/v4.channel.k8s.io"),
// and the WebSocket upgrades refused ("websocket/refused").
func (s *Server) ExecProtocols() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.execProtocols))
	for k, v := range s.execProtocols {
		out[k] = v
	}
	return out
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

// runInContainer runs command in the Docker container id through the
// Engine API, as a kubelet runs an exec through its container runtime,
// with the streams attached. When the client goes away its stdin ends,
// and nothing else happens to the process: a real runtime does not kill
// an exec whose client disconnected either.
func (s *Server) runInContainer(id string, command []string, streams map[string]io.ReadWriteCloser) (int, error) {
	ctx := context.Background()
	stdin, hasStdin := streams[corev1.StreamTypeStdin]
	ec, err := s.docker.ExecCreate(ctx, id, client.ExecCreateOptions{
		Cmd: command, AttachStdin: hasStdin, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return 0, err
	}
	att, err := s.docker.ExecAttach(ctx, ec.ID, client.ExecAttachOptions{})
	if err != nil {
		return 0, err
	}
	defer att.Close()
	if hasStdin {
		go func() {
			_, _ = io.Copy(att.Conn, stdin)
			_ = att.CloseWrite()
		}()
	}
	stdout, stderr := io.Writer(io.Discard), io.Writer(io.Discard)
	if st, ok := streams[corev1.StreamTypeStdout]; ok {
		stdout = st
	}
	if st, ok := streams[corev1.StreamTypeStderr]; ok {
		stderr = st
	}
	_, _ = stdcopy.StdCopy(stdout, stderr, att.Reader)
	for _, k := range []string{corev1.StreamTypeStdout, corev1.StreamTypeStderr} {
		if st, ok := streams[k]; ok {
			_ = st.Close()
		}
	}
	// The stream can end tens of milliseconds before the engine records
	// the exit: ask often at first (a kubelet hears of the exit at once).
	start := time.Now()
	for {
		delay := 2 * time.Millisecond
		if time.Since(start) > 200*time.Millisecond {
			delay = 20 * time.Millisecond
		}
		if time.Since(start) > 5*time.Second {
			// The engine can keep an exec "running" whose container was
			// killed: the container's end is the exec's.
			return 137, nil
		}
		res, err := s.docker.ExecInspect(ctx, ec.ID, client.ExecInspectOptions{})
		if err != nil {
			return 0, err
		}
		if !res.Running {
			return res.ExitCode, nil
		}
		time.Sleep(delay)
	}
}

// writeExitStatus reports the command's end on the error stream, as the
// kubelet does in protocol v4.
func writeExitStatus(st io.WriteCloser, code int, err error) {
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

func asRWC(streams map[string]httpstream.Stream) map[string]io.ReadWriteCloser {
	out := make(map[string]io.ReadWriteCloser, len(streams))
	for k, v := range streams {
		out[k] = v
	}
	return out
}
