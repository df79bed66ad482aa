package host

import (
	"context"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// A hook run through a plugin holds its three standard descriptors and
// nothing else: not the calls socket, the TLS pipe or the plugin's own
// binary the host passed the plugin at launch. (A hook that held the
// calls socket could speak for the host.)
func TestHookInheritsOnlyStdio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	install(t, testPlugin, dir, "promptkit-sandbox-test_v1.0.0")
	h := newHost(t, Options{Dirs: []string{dir}})
	sb := open(t, h, config.Sandbox{Name: "fds", Mode: "test_direct"})
	for _, stdin := range [][]byte{nil, make([]byte, 2<<20)} { // the calls socket, then a Spawn stream
		// ls lists its own descriptors, 3 being the directory it reads.
		resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "ls", Args: []string{"/proc/self/fd"}, Stdin: stdin})
		if err != nil || string(resp.Stdout) != "0\n1\n2\n3\n" {
			t.Errorf("with %d bytes of stdin, the hook's descriptors: %q, %v; want 0, 1, 2 and ls's own 3", len(stdin), resp.Stdout, err)
		}
	}
	// Nor does it see the variables that named them.
	resp, err := sb.Spawn(context.Background(), sandbox.Request{Command: "env"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{plugin.EnvCallsFD, plugin.EnvTLSFD, plugin.EnvExecFD} {
		if strings.Contains(string(resp.Stdout), v+"=") {
			t.Errorf("the hook's environment holds %s", v)
		}
	}
}
