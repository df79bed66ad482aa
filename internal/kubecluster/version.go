package kubecluster

import "runtime"

// Version is the Kubernetes release every component is built at. The
// staging modules (k8s.io/api, k8s.io/client-go, ...) are at the matching
// v0.X.Y, which is also what this repository's go.mod requires.
const Version = "v1.37.2"

// stagingVersion is the version of the staging modules released with
// Version: k8s.io/kubernetes v1.X.Y ships k8s.io/* v0.X.Y.
const stagingVersion = "v0.37.2"

// recipeVersion changes whenever the way the binaries are built changes in
// a way the hashed inputs (go.mod, patch, flags, toolchain) would not show.
const recipeVersion = "2"

// Components are the binaries built from k8s.io/kubernetes/cmd/<name>, in
// build order: the slowest first, so a developer watching a cold build sees
// the worst of it early.
var Components = []string{
	"kube-apiserver",
	"kubelet",
	"kube-controller-manager",
	"kube-scheduler",
	"kube-proxy",
	"kubectl",
}

// binaries are every program the cache holds: the Kubernetes components
// and kube-router (kuberouter.go), which is built from a module of its own.
var binaries = append(append([]string{}, Components...), "kube-router")

// ldflags strips the binaries and stamps the version the components report
// (the kubelet's node status, kubectl version, the apiserver's /version):
// built from the module proxy there is no git tree to read it from.
func ldflags() string {
	flags := "-s -w"
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags += " -X " + pkg + ".gitVersion=" + Version +
			" -X " + pkg + ".gitMajor=1 -X " + pkg + ".gitMinor=37" +
			" -X " + pkg + ".gitTreeState=clean"
	}
	return flags
}

// target is the platform the binaries are built for: this machine's.
func target() string { return runtime.GOOS + "/" + runtime.GOARCH }
