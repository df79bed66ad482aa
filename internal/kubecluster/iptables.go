package kubecluster

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// forwardRule is the iptables rule (without the -A/-I/-D verb) letting
// traffic between pods through FORWARD.
var forwardRule = []string{"FORWARD", "-i", bridgeName, "-o", bridgeName, "-m", "comment", "--comment", ruleComment, "-j", "ACCEPT"}

// iptables runs iptables (or ip6tables), waiting for the xtables lock
// (-w) that Docker and kube-proxy also take.
func iptables(args ...string) error { return xtables("iptables", args...) }

func xtables(cmd string, args ...string) error {
	out, err := exec.Command(cmd, append([]string{"-w", "5"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", cmd, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func addForwardRule() error {
	if iptables(append([]string{"-C"}, forwardRule...)...) == nil {
		return nil
	}
	return iptables(append([]string{"-I", forwardRule[0], "1"}, forwardRule[1:]...)...)
}

func removeForwardRule() {
	for iptables(append([]string{"-D"}, forwardRule...)...) == nil {
	}
}

// A kubeletChain is an iptables chain the kubelet makes (in
// pkg/kubelet/kubelet_network_linux.go), which kube-proxy --cleanup
// leaves: a hint of the iptables flavour, canaries to notice a flush, and
// KUBE-FIREWALL (martian localhost traffic, IPv4 only) with the INPUT and
// OUTPUT jumps to it. kube-proxy makes KUBE-FIREWALL for IPv6 as well,
// and its --cleanup leaves it too.
type kubeletChain struct{ cmd, table, chain string }

var kubeletChains = []kubeletChain{
	{"iptables", "mangle", "KUBE-IPTABLES-HINT"},
	{"iptables", "filter", "KUBE-FIREWALL"},
	{"iptables", "mangle", "KUBE-KUBELET-CANARY"},
	{"iptables", "nat", "KUBE-KUBELET-CANARY"},
	{"iptables", "filter", "KUBE-KUBELET-CANARY"},
	{"ip6tables", "mangle", "KUBE-IPTABLES-HINT"},
	{"ip6tables", "filter", "KUBE-FIREWALL"},
	{"ip6tables", "mangle", "KUBE-KUBELET-CANARY"},
	{"ip6tables", "nat", "KUBE-KUBELET-CANARY"},
	{"ip6tables", "filter", "KUBE-KUBELET-CANARY"},
}

func (c kubeletChain) String() string { return c.cmd + " " + c.table + " " + c.chain }

// presentKubeletChains lists the kubelet chains the host has, so that
// teardown leaves those another Kubernetes made alone.
func presentKubeletChains() []string {
	var out []string
	for _, c := range kubeletChains {
		if xtables(c.cmd, "-t", c.table, "-S", c.chain) == nil {
			out = append(out, strings.ReplaceAll(c.String(), " ", "/"))
		}
	}
	return out
}

// removeKubeletChains removes the kubelet's chains but those in before.
func removeKubeletChains(before []string) {
	for _, c := range kubeletChains {
		if slices.Contains(before, strings.ReplaceAll(c.String(), " ", "/")) {
			continue
		}
		if c.chain == "KUBE-FIREWALL" {
			for _, from := range []string{"INPUT", "OUTPUT"} {
				for xtables(c.cmd, "-t", c.table, "-D", from, "-j", c.chain) == nil {
				}
			}
		}
		_ = xtables(c.cmd, "-t", c.table, "-F", c.chain)
		_ = xtables(c.cmd, "-t", c.table, "-X", c.chain)
	}
}
