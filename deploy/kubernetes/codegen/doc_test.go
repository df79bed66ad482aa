// Package codegen holds the manifests for the kubectl_codegen provider:
// the provider's ServiceAccount, Role and RoleBinding (exactly the calls
// kubecodegen.Calls lists) and a RuntimeConfig that declares a codegen
// sandbox. Its tests check the Role against those calls and, on a real
// cluster, provision through a service account bound to it.
package codegen
