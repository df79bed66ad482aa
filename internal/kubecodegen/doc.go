// Package kubecodegen serves kubectl_codegen, the Kubernetes codegen
// provider: each Provision runs sandboxd in a Pod of its own and hands
// out an MCP endpoint and a fresh bearer token, as docker_codegen does on
// one machine.
//
// A sandbox is four objects in the configured namespace, named
// sandboxd-<id> and labelled with its id:
//
//   - a Secret holding the token, created first: the others name it as
//     their owner, so deleting it (Release, codegen down, or kubectl
//     delete) takes the whole sandbox with it through the garbage
//     collector;
//   - a NetworkPolicy, created before the Pod, that denies the sandbox
//     every egress (network: none, the default) and admits ingress only
//     to sandboxd's port;
//   - a Service in front of sandboxd's port, for agents in the cluster;
//   - the Pod: the sandboxd image as UID 65532, read-only root, no
//     capabilities, no privilege escalation, the RuntimeDefault seccomp
//     profile, no service account token, the token mounted as a file
//     (never an environment variable or an argument), the workspace on
//     an emptyDir or a PersistentVolumeClaim, and a writable /tmp.
//
// The endpoint is a port on 127.0.0.1 of the plugin's process forwarded
// to the Service (internal/loopback), as docker_codegen's is: the same
// contract for every provider. Provision returns once an MCP initialize
// through it has been answered (internal/mcpready). Calls lists the API
// requests it makes; deploy/kubernetes/codegen grants exactly those.
package kubecodegen
