package testcover

import (
	"os"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// TestMain lets this test binary contain the commands its tests run as
// a program does: by a cgroup or a supervisor, starts of this binary.
func TestMain(m *testing.M) {
	supervisor.Init()
	os.Exit(m.Run())
}
