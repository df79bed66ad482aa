// Package kubebox is the Kubernetes backend of promptkit-sandbox, to be
// served by the promptkit-sandbox-kubectl plugin: mode kubectl_exec runs
// each hook call inside a container of an existing pod, typically a
// long-lived hooks sidecar next to the agent (see deploy/kubernetes).
//
// Work in progress: so far the configuration (this package validates it
// as the plugin will); the transports come next.
//
//	key           default                 meaning
//	pod           (required w/o selector) the pod's name; ${POD_NAME} expands from the environment
//	selector      none                    a label selector: a Running and Ready pod matching it is used
//	namespace     the kubeconfig's        the pod's namespace
//	container     the pod's default       the container to run in
//	kubeconfig    in-cluster or default   path of a kubeconfig file
//	context       the current one         kubeconfig context
//	env           []                      KEY=value set verbatim, or bare KEY forwarded
//	transport     native                  native (client-go exec streaming) or cli (the kubectl binary)
//	kubectl_path  kubectl                 the kubectl binary, for transport cli
//	extra_args    []                      kubectl arguments, for transport cli
//	timeout       10s                     for calls that set none
//	output_limit  16777216                bytes kept of each of stdout and stderr
package kubebox
