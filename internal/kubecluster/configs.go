package kubecluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// containerdConfig is a second containerd, beside Docker's, with the CRI
// plugin on: its own socket, root, state, runc root and CNI configuration,
// so Docker's containerd and its containers are never touched. The CRI
// streaming server (kubectl exec goes apiserver -> kubelet -> it) listens
// on a loopback port of its own choosing. Pods get the pause image we
// import (no registry is reachable).
func containerdConfig(l layout, pauseRef string) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
plugin_dir = ""
oom_score = 0

[grpc]
  address = %[3]q
  tcp_address = ""

[ttrpc]
  address = ""

[debug]
  address = ""

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = %[4]q
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    disable_apparmor = true
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = %[5]q
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = %[6]q
      conf_dir = %[7]q
  [plugins."io.containerd.runtime.v1.linux"]
    runtime_root = %[8]q
  [plugins."io.containerd.internal.v1.opt"]
    path = %[9]q
`, l.path("containerd", "root"), l.path("containerd", "state"), l.containerdSocket(),
		pauseRef, l.path("containerd", "runc"), cniDir, l.cniConfDir(),
		l.path("containerd", "runc-v1"), l.path("containerd", "opt"))
}

// cniConfig is the pod network: Debian's bridge and host-local plugins.
// The bridge gets bridgeIP and the pods a route to the Service range only
// (no default route, no masquerade): pods reach each other, Services and
// the bridge address, and nothing beyond the machine.
func cniConfig(l layout) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "promptkit-kubecluster",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": %q}]
      }
    }
  ]
}
`, bridgeName, l.path("cni", "ipam"), podCIDR, bridgeIP, serviceCIDR)
}

// kubeletConfig runs the kubelet on 127.0.0.1 with the host's cgroup v1
// (cgroupfs; failCgroupV1 off), swap tolerated, our containerd, and no
// image garbage collection (imported images cannot be pulled back).
// protectKernelDefaults stays off: with our patched kubelet that means
// "warn", never "modify" (see patch.go).
func kubeletConfig(l layout) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %q
authorization:
  mode: Webhook
tlsCertFile: %q
tlsPrivateKeyFile: %q
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%s
clusterDomain: %s
resolvConf: ""
staticPodPath: ""
enforceNodeAllocatable: []
cgroupsPerQOS: true
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%%"
  imagefs.available: "1%%"
  nodefs.inodesFree: "1%%"
evictionPressureTransitionPeriod: 10s
protectKernelDefaults: false
serializeImagePulls: false
podLogsDir: %q
`, kubeletPort, kubeletHealthz, l.pki("ca.crt"), l.pki("kubelet-serving.crt"), l.pki("kubelet-serving.key"),
		l.containerdSocket(), clusterDomain, l.path("kubelet", "pod-logs"))
}

// proxyConfig is kube-proxy in iptables mode, told to leave the kernel
// alone: conntrack sizes and timeouts of 0 mean "do not set", and with
// NodePorts only on the bridge address it has no reason to set
// route_localnet.
func proxyConfig(l layout) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %q
hostnameOverride: %s
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
mode: iptables
clusterCIDR: %s
nodePortAddresses: [%s/32]
iptables:
  localhostNodePorts: false
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  udpTimeout: 0s
  udpStreamTimeout: 0s
`, l.pki("kube-proxy.kubeconfig"), nodeName, proxyHealthz, proxyMetrics, podCIDR, bridgeIP)
}

// writeConfigs writes every configuration file into the state directory
// and makes the directories the components expect.
func writeConfigs(l layout, pauseRef string) error {
	files := map[string]string{
		l.containerdConfig(): containerdConfig(l, pauseRef),
		filepath.Join(l.cniConfDir(), "10-promptkit.conflist"): cniConfig(l),
		l.kubeletConfig(): kubeletConfig(l),
		l.proxyConfig():   proxyConfig(l),
	}
	for _, d := range []string{"logs", "run", "kubelet/root", "kubelet/pod-logs", "cni/ipam", "cni/net.d", "kube-proxy", "containerd"} {
		// #nosec G301 -- the test cluster's component directories, as their own packages make them
		if err := os.MkdirAll(l.path(strings.Split(d, "/")...), 0o755); err != nil {
			return err
		}
	}
	for path, content := range files {
		// #nosec G306 -- the test cluster's component configs: no secrets in them (keys are files of their own, 0600)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}
