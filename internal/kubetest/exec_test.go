package kubetest

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

func TestKubectlExec(t *testing.T) {
	dockertest.Require(t)
	img := dockertest.Image(t, dockertest.Busybox)
	id := dockertest.Docker(t, "run", "-d", "--rm", "--init", "--network", "none", "--label", dockertest.UniqueLabel(t), img, "sleep", "600")
	id = strings.TrimSpace(id)
	s := Start(t)
	s.AddPod("promptkit", "agent-1", map[string]string{"app": "agent"}, map[string]string{"hooks": id})
	kc := s.Kubeconfig(t, t.TempDir(), "promptkit")

	path := kubectlPath(t)
	// kubectl 1.32 speaks WebSocket v5 unless told not to; then SPDY.
	for _, tc := range []struct{ websockets, protocol string }{
		{"true", "websocket/v5.channel.k8s.io"},
		{"false", "spdy/v4.channel.k8s.io"},
	} {
		cmd := exec.Command(path, "--kubeconfig", kc, "exec", "-i", "agent-1", "-c", "hooks", "--",
			"/bin/sh", "-c", `cat; echo to-stderr >&2; exit 3`)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "KUBECTL_REMOTE_COMMAND_WEBSOCKETS=" + tc.websockets}
		cmd.Stdin = strings.NewReader("hello from stdin")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		before := s.ExecProtocols()[tc.protocol]
		err := cmd.Run()
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != 3 {
			t.Fatalf("%s: exit: %v (stderr %q)", tc.protocol, err, stderr.String())
		}
		if stdout.String() != "hello from stdin" {
			t.Errorf("%s: stdout = %q", tc.protocol, stdout.String())
		}
		if !strings.HasPrefix(stderr.String(), "to-stderr\n") || !strings.Contains(stderr.String(), "command terminated with exit code 3") {
			t.Errorf("%s: stderr = %q", tc.protocol, stderr.String())
		}
		if got := s.ExecProtocols()[tc.protocol]; got != before+1 {
			t.Errorf("%s: not served over it (%v)", tc.protocol, s.ExecProtocols())
		}
	}
}
