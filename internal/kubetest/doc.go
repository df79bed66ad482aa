// Package kubetest is a loopback Kubernetes API endpoint for tests: there
// is no cluster on our machines. It speaks the protocol kubectl and
// client-go speak for the kubectl_exec path — TLS with a CA of its own and
// a kubeconfig pointing at it, GET and LIST of pods (with label
// selectors) — and its pods are containers on the local Docker engine, so
// what runs in a pod runs for real.
//
// Work in progress: the pods/exec subresource (SPDY and WebSocket
// v5.channel.k8s.io) is next.
package kubetest
