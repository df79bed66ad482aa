package kubecluster

import (
	"strings"
	"testing"
)

// TestConfigsListenOnLoopbackOnly: nothing the cluster runs may listen
// beyond 127.0.0.1 (or, for NodePorts, the pod bridge).
func TestConfigsListenOnLoopbackOnly(t *testing.T) {
	l := layout("/state")
	all := containerdConfig(l, "pause") + kubeletConfig(l) + proxyConfig(l) +
		strings.Join(etcdArgs(l), " ") + strings.Join(apiserverArgs(l), " ") +
		strings.Join(controllerManagerArgs(l), " ") + strings.Join(schedulerArgs(l), " ")
	for _, bad := range []string{"0.0.0.0", "[::]", "::/0"} {
		if strings.Contains(all, bad) {
			t.Errorf("a configuration mentions %s", bad)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/a\040b/c`); got != "/a b/c" {
		t.Errorf("unescapeMount = %q", got)
	}
}

func TestNamespaceNamesAreDNSLabels(t *testing.T) {
	for _, name := range []string{"TestX/Sub_Case#01", "Test" + strings.Repeat("Long", 30)} {
		got := namespaceName(name, "abc123")
		if len(got) > 63 || notDNSLabel.MatchString(got) || !strings.HasSuffix(got, "-abc123") {
			t.Errorf("%q makes namespace %q", name, got)
		}
	}
}
