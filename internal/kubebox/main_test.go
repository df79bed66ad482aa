package kubebox

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
)

// TestMain silences klog (client-go and the harness's stream code log
// every stream a timeout closes on purpose), takes the resident from a
// static build of the plugin, and stops the shared cluster at the end.
func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	os.Exit(kubecluster.Main(kubecluster.RunFunc(func() int { return plugintest.RunWithResident(m, "../../cmd/promptkit-sandbox-kubectl") })))
}
