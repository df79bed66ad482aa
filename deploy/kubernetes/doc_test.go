// Package kubernetes holds the manifests for running hooks in a sidecar
// with the kubectl_exec sandbox (a Deployment with an agent and a hooks
// container, a ServiceAccount, and a Role and RoleBinding granting exactly
// what the plugin uses). Its tests decode them strictly with the
// k8s.io/api types, and apply them to a real single-node cluster
// (internal/kubecluster): the service account may do exactly what the
// plugin needs, and a hook run in the agent container goes through
// kubectl_exec into the sidecar.
package kubernetes
