// Package kubernetes holds the manifests for running hooks in a sidecar
// with the kubectl_exec sandbox (a Deployment with an agent and a hooks
// container, a ServiceAccount, and a Role and RoleBinding granting exactly
// what the plugin uses). Its test decodes them strictly with the
// k8s.io/api types.
package kubernetes
