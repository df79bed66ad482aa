package kubecluster

import (
	"os"
	"path/filepath"
)

// Everything the cluster listens on is on 127.0.0.1, on the usual ports
// (one cluster per machine at a time; Start checks they are free).
const (
	host            = "127.0.0.1"
	apiserverPort   = 6443
	etcdClientPort  = 2379
	etcdPeerPort    = 2380
	kubeletPort     = 10250
	kubeletHealthz  = 10248
	proxyHealthz    = 10256
	proxyMetrics    = 10249
	controllerPort  = 10257
	schedulerPort   = 10259
	apiserverServer = "https://127.0.0.1:6443"
)

// ports are every TCP port the cluster listens on, for the free-port check.
var ports = []int{apiserverPort, etcdClientPort, etcdPeerPort, kubeletPort, kubeletHealthz,
	proxyHealthz, proxyMetrics, controllerPort, schedulerPort}

// The kubelet refuses a loopback --node-ip, so the node is named
// "localhost" and the apiserver reaches it by that hostname
// (--kubelet-preferred-address-types=Hostname), on 127.0.0.1:10250.
const nodeName = "localhost"

// The pod network: one Linux bridge, host-local addresses, no masquerade.
// The bridge's own address (the first of the range) is the pods' route to
// Service addresses, which kube-proxy DNATs on the host.
const (
	bridgeName    = "pkc0"
	podCIDR       = "10.244.0.0/24"
	bridgeIP      = "10.244.0.1"
	serviceCIDR   = "10.96.0.0/16"
	clusterDomain = "cluster.local"
	// ruleComment marks the iptables rules the harness adds, so down
	// removes exactly those.
	ruleComment = "promptkit-kubecluster"
)

// DefaultDir is the state directory Start uses when Options.Dir is empty:
// <tmp>/promptkit-kubecluster. make kube-up and make kube-down use it too.
func DefaultDir() string { return filepath.Join(os.TempDir(), "promptkit-kubecluster") }

// layout names the files and directories of a cluster's state directory.
type layout string

func (l layout) path(parts ...string) string {
	return filepath.Join(append([]string{string(l)}, parts...)...)
}

func (l layout) pki(name string) string     { return l.path("pki", name) }
func (l layout) log(name string) string     { return l.path("logs", name+".log") }
func (l layout) pidFile(name string) string { return l.path("run", name+".pid") }
func (l layout) owner() string              { return l.path("run", "owner") }
func (l layout) containerdSocket() string   { return l.path("containerd", "containerd.sock") }
func (l layout) containerdConfig() string   { return l.path("containerd", "config.toml") }
func (l layout) cniConfDir() string         { return l.path("cni", "net.d") }
func (l layout) kubeletConfig() string      { return l.path("kubelet", "config.yaml") }
func (l layout) proxyConfig() string        { return l.path("kube-proxy", "config.yaml") }

// Kubeconfig is the admin kubeconfig of a cluster in dir.
func Kubeconfig(dir string) string { return layout(dir).pki("admin.kubeconfig") }
