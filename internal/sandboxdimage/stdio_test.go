package sandboxdimage

import (
	"context"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

// stdioSandbox runs sandboxd of image ref in a container with run's
// profile, serving its workspace over stdio (`docker run -i`), and
// connects the official MCP client to it. dockerArgs go before the
// image, logLevel is sandboxd's and its log goes to stderr. Closing the
// session ends the container; the test's end checks none is left.
func stdioSandbox(t testing.TB, ref string, run codegenimage.Run, dockerArgs []string, logLevel string, stderr io.Writer) *mcp.ClientSession {
	t.Helper()
	label := dockertest.UniqueLabel(t)
	args := append([]string{"run", "-i", "--rm", "--label", label}, run.Args()...)
	args = append(append(args, dockerArgs...), ref, "--stdio", "--workspace", codegenimage.WorkspaceDir, "--log-level", logLevel)
	cmd := exec.Command("docker", args...)
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "image-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Logf("close: %v", err)
		}
		dockertest.AssertNoContainers(t, label)
	})
	return cs
}
