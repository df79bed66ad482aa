package kubecodegen

import (
	"os"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
)

// TestMain stops the shared cluster, if a test started one.
func TestMain(m *testing.M) { os.Exit(kubecluster.Main(m)) }
