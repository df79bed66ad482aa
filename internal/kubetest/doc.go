// Package kubetest is a loopback Kubernetes API endpoint for tests: there
// is no cluster on our machines. It speaks the protocol kubectl and
// client-go speak for the kubectl_exec path — TLS with a CA of its own and
// a kubeconfig pointing at it, GET and LIST of pods (with label
// selectors) — and its pods are containers on the local Docker engine, so
// what runs in a pod runs for real.
//
// pods/exec is served over SPDY (remote command protocol v4, exit codes
// on the error stream), each command run in the pod's container with
// docker exec. A WebSocket upgrade is refused for now, so kubectl falls
// back to SPDY; serving WebSocket v5.channel.k8s.io is the next step
// (k8s.io/apiserver's StreamTranslatorHandler can front the SPDY one).
package kubetest
