package main

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecluster"
)

// TestMain silences klog and stops the shared cluster when the tests end.
func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	os.Exit(kubecluster.Main(m))
}
