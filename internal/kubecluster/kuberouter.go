package kubecluster

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// NetworkPolicy is enforced by kube-router's network policy controller
// alone (--run-firewall; its router and service proxy stay off: the
// bridge CNI wires pods and kube-proxy carries Services). It implements
// policies with iptables chains and ipsets on the host, which sees
// pod-to-pod traffic on the bridge because bridge-nf-call-iptables is on
// (Docker turns it on; we do not touch it). It is built from the module
// proxy like the Kubernetes components, at the newest version the proxy
// lists. It needs Debian's ipset.
const (
	kubeRouterModule  = "github.com/cloudnativelabs/kube-router/v2"
	kubeRouterVersion = "v2.1.0"
	kubeRouterPackage = kubeRouterModule + "/cmd/kube-router"
)

// kubeRouterGoMod is the go.mod of kube-router's build module.
func kubeRouterGoMod() string {
	return "module promptkit-sandbox.local/kuberouterbuild\n\ngo 1.26.0\n\nrequire " +
		kubeRouterModule + " " + kubeRouterVersion + "\n"
}

// kubeRouterArgs: the policy controller only, IPv4 only (the pod network
// is), and no listener at all: its health port would bind every address,
// metrics and pprof are off by default.
func kubeRouterArgs(l layout) []string {
	return []string{
		"--kubeconfig=" + l.pki("kube-router.kubeconfig"),
		"--run-firewall=true", "--run-router=false", "--run-service-proxy=false",
		"--hostname-override=" + nodeName, "--health-port=0",
		"--enable-ipv4=true", "--enable-ipv6=false",
		"--service-cluster-ip-range=" + serviceCIDR,
	}
}

// kubeRouterChain matches the chains kube-router's policy controller
// makes (pkg/controllers/netpol): its three top-level chains, one per pod
// and one per policy.
var kubeRouterChain = regexp.MustCompile(`^KUBE-(ROUTER-(INPUT|FORWARD|OUTPUT)|POD-FW-|NWPLCY-)`)

// kubeRouterSet matches its ipsets (pod and policy address sets).
var kubeRouterSet = regexp.MustCompile(`^KUBE-(SRC|DST)-`)

// removeKubeRouterRules removes kube-router's chains, the rules jumping
// to them and its ipsets. Its own --cleanup-config would also flush the
// host's IPVS services and routes it did not make, so we do it by name.
// The deletions go through iptables-restore --noflush in one batch, which
// parses the rules' quoting for us and leaves every other rule alone.
func removeKubeRouterRules() error {
	out, err := exec.Command("iptables-save", "-t", "filter").Output()
	if err != nil {
		return fmt.Errorf("iptables-save: %w", err)
	}
	var jumps, chains []string
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, ":"):
			if name := strings.Fields(line[1:])[0]; kubeRouterChain.MatchString(name) {
				chains = append(chains, name)
			}
		case strings.HasPrefix(line, "-A "):
			f := strings.Fields(line)
			if len(f) > 1 && !kubeRouterChain.MatchString(f[1]) && jumpsToKubeRouter(f) {
				jumps = append(jumps, "-D"+line[2:])
			}
		}
	}
	if len(chains) > 0 || len(jumps) > 0 {
		var script bytes.Buffer
		script.WriteString("*filter\n")
		for _, j := range jumps {
			script.WriteString(j + "\n")
		}
		for _, c := range chains {
			script.WriteString("-F " + c + "\n")
		}
		for _, c := range chains {
			script.WriteString("-X " + c + "\n")
		}
		script.WriteString("COMMIT\n")
		cmd := exec.Command("iptables-restore", "-w", "5", "--noflush")
		cmd.Stdin = &script
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("iptables-restore removing kube-router's rules: %w: %s\n%s", err, bytes.TrimSpace(out), script.String())
		}
	}
	return destroyKubeRouterSets()
}

// jumpsToKubeRouter reports whether the rule's target is a kube-router chain.
func jumpsToKubeRouter(fields []string) bool {
	for i, f := range fields {
		if (f == "-j" || f == "-g") && i+1 < len(fields) && kubeRouterChain.MatchString(fields[i+1]) {
			return true
		}
	}
	return false
}

// destroyKubeRouterSets destroys kube-router's ipsets; no rule refers to
// them any more once its chains are gone.
func destroyKubeRouterSets() error {
	if _, err := exec.LookPath("ipset"); err != nil {
		return nil // no ipset, so no sets either
	}
	out, err := exec.Command("ipset", "list", "-n").Output()
	if err != nil {
		return fmt.Errorf("ipset list: %w", err)
	}
	for _, name := range strings.Fields(string(out)) {
		if !kubeRouterSet.MatchString(name) {
			continue
		}
		if out, err := exec.Command("ipset", "destroy", name).CombinedOutput(); err != nil {
			return fmt.Errorf("ipset destroy %s: %w: %s", name, err, bytes.TrimSpace(out))
		}
	}
	return nil
}
