package arena_test

import (
	"fmt"
	"log/slog"
	"os"
	"testing"

	pkconfig "github.com/AltairaLabs/PromptKit/pkg/config"
	pklogger "github.com/AltairaLabs/PromptKit/runtime/logger"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/promptkit"
)

func TestMain(m *testing.M) {
	// As a program running the source would: anything the adapter runs
	// in this process is contained by starts of this binary.
	promptkit.Init()
	// PromptKit logs every call at info.
	pklogger.SetLogger(slog.New(slog.DiscardHandler))
	// Loading an arena config fetches its JSON schema from
	// promptkit.altairalabs.ai; tests talk to loopback only.
	// TestKitMatchesTheSchema checks the kits against the released
	// schema instead.
	pkconfig.SchemaValidationDisabled.Store(true)
	dir, err := os.MkdirTemp("", "promptkit-arena-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	plugins.dir, plugins.built = dir, map[string]bool{}
	// kubecluster.Main stops the cluster the Kubernetes test starts.
	code := kubecluster.Main(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
