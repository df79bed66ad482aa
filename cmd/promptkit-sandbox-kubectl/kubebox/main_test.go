package kubebox

import (
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// TestMain silences klog: client-go and the harness's stream code log
// every stream a timeout closes on purpose.
func TestMain(m *testing.M) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}
