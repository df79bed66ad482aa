// Package kubetest is a loopback Kubernetes API endpoint for tests: there
// is no cluster on our machines. It speaks the protocol kubectl and
// client-go speak for the kubectl_exec path — TLS with a CA of its own and
// a kubeconfig pointing at it, GET and LIST of pods (with label
// selectors) — and its pods are containers on the local Docker engine, so
// what runs in a pod runs for real.
//
// pods/exec is served over WebSocket (v5.channel.k8s.io, which kubectl
// 1.30+ tries first, and v4) and over SPDY (v4.channel.k8s.io), with the
// Kubernetes stream packages (k8s.io/streaming); each command runs in the
// pod's container with docker exec, and its exit code comes back on the
// error channel as the kubelet sends it.
//
// The real cluster (internal/kubecluster) runs kubectl_exec's behaviour
// tests; this fake remains for the faults a real cluster cannot be made
// to produce: an API server that refuses WebSocket upgrades
// (RefuseWebSockets), as those before 1.30 and some proxies do, and the
// PromptKit adapter's tests, which need a pod in a second or two and no
// root.
//
// Start skips the test under go test -short (make unit), which runs
// without Docker.
package kubetest
