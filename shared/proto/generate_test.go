package sandboxpb

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// generated are the files generate.sh writes, all committed.
var generated = []string{"sandbox.pb.go", "sandbox_grpc.pb.go"}

// TestGeneratedCodeIsFresh regenerates the code with the pinned tools and
// compares it with what is committed. Without the tools it skips, except
// in CI, which must run it.
func TestGeneratedCodeIsFresh(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command("bash", "generate.sh")
	cmd.Env = append(os.Environ(), "GENERATE_OUT="+out, "GENERATE_INSTALL=0")
	msg, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		// A generator is missing or at the wrong version.
		ci.Skipf(t, "cannot check generated code: %s(the Makefile installs the plugins; protoc comes from Debian's protobuf-compiler)", msg)
	}
	if err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, msg)
	}
	for _, name := range generated {
		want, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("generate.sh did not write %s: %v", name, err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("committed %s: %v (run make generate)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("shared/proto/%s is stale: it differs from what sandbox.proto generates; run make generate and commit the result", name)
		}
	}
}
