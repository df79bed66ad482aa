// Package kubecluster runs a real single-node Kubernetes for tests, built
// from the Go module proxy and Debian's packages, on 127.0.0.1, with no
// registry: the harness under kubectl_exec's tests and the deploy
// manifests. internal/kubetest's loopback fake remains for the faults a
// real cluster cannot be made to produce.
//
// # What runs
//
// Built from k8s.io/kubernetes at Version with CGO_ENABLED=0, stripped:
// kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
// kube-proxy and a kubectl of the same version; and kube-router, whose
// network policy controller alone enforces NetworkPolicy with iptables
// and ipsets (kuberouter.go). From Debian (installed with apt-get when
// missing and running as root): etcd-server, containerd and runc,
// containernetworking-plugins (bridge, host-local), ipset. containerd
// is a second instance beside Docker's, with the CRI plugin on its own
// socket, root and state under the state directory; Docker's containerd is
// never touched. Pods run on a Linux bridge (pkc0, 10.244.0.0/24) and
// kube-proxy (iptables mode) makes Services carry traffic; kube-router
// enforces NetworkPolicy (TestLifecycle proves a deny-egress policy).
// Pods reach the apiserver, which listens on 127.0.0.1 only, where
// in-cluster clients look for it, the kubernetes Service's 10.96.0.1:443,
// through one DNAT rule on our bridge (host.go says how). The node is
// named localhost: the kubelet refuses a loopback node IP, so the
// apiserver reaches it by hostname.
//
// No registry is reachable, so images are built FROM scratch with docker
// build (dockertest's images, and a pause image of our own) and imported
// with `docker save | ctr images import`; pods use them with
// imagePullPolicy: Never.
//
// # The kernel is left alone
//
// The stock kubelet sets vm.overcommit_memory, kernel.panic,
// kernel.panic_on_oops and a few more sysctls at start. Ours is built from
// a copy of k8s.io/kubernetes with one line changed so that it only warns
// (patch.go says how and why); kube-proxy is configured not to set
// conntrack limits or route_localnet. TestLifecycle checks the sysctls
// after up and after down.
//
// # The binary cache
//
// The build runs once per machine and recipe: about 10 minutes on two
// cores from an empty Go build cache (kube-apiserver alone about 6), a
// minute when only the recipe changed, after which Start takes about 10
// seconds. The binaries are kept in
//
//	$XDG_CACHE_HOME/promptkit-sandbox/kube/<version>-<hash>/  (~/.cache/... by default)
//
// where the hash covers the recipe, the generated go.mod, the kubelet
// patch, kube-router's version, the flags, the platform and the Go
// toolchain, so changing any of them builds anew beside the old entry.
// Old entries are not pruned: another checkout on the machine may still
// use them. Concurrent test binaries wait on a lock file, and a build is
// renamed into place whole. To clean the cache, with no cluster running:
//
//	rm -rf ~/.cache/promptkit-sandbox/kube
//
// The Go build cache and module cache keep their share as usual (go clean
// -cache / -modcache).
//
// # Up and down
//
// Start(ctx, Options) brings a cluster up in the state directory
// (DefaultDir(): /tmp/promptkit-kubecluster) and Stop tears it down, or
// StopDir from another process (make kube-up / make kube-down run
// cmd/kubecluster). One cluster runs per machine at a time: the ports are
// fixed, a lock serializes test binaries, and a cluster left behind by a
// crashed test binary is cleared by the next Start. Down leaves nothing:
// pods are deleted through the API so the kubelet tears their sandboxes
// down, then every process stops (leftover shims are killed), and the
// iptables rules (kube-proxy --cleanup, the kubelet's canaries,
// kube-router's chains and ipsets, our one FORWARD rule), the bridge and
// veths, containerd's network namespaces, mounts under the state
// directory, the kubelet's cgroups, the directories components make at
// fixed paths (/var/lib/kubelet, /var/log/containers, /var/lib/cni,
// /run/netns, when the host had none) and the state directory go.
// TestLifecycle proves it against a snapshot of the host.
//
// # In tests
//
// A package's tests share one cluster, started on first use:
//
//	func TestMain(m *testing.M) { os.Exit(kubecluster.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		c := kubecluster.Shared(t) // skips under -short
//		ns := c.Namespace(t)       // deleted when the test ends
//		pod := c.RunPod(t, &corev1.Pod{... Image: c.Image(t, dockertest.Hooks) ...})
//		... c.Client, c.Config, c.Kubeconfig, c.Kubectl ...
//	}
//
// Under go test -short the tests skip before building or installing
// anything. Where a cluster cannot run (not Linux, not root, packages
// missing and not installable) they skip and say why, except under CI,
// where they fail.
package kubecluster
