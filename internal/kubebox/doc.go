// Package kubebox is the Kubernetes backend of promptkit-sandbox, served
// by the promptkit-sandbox-kubectl plugin: mode kubectl_exec runs each
// hook call inside a container of an existing pod, typically a
// long-lived hooks sidecar next to the agent (see deploy/kubernetes).
//
// Its keys, their defaults and meanings are in docs/kubernetes.md, once;
// the list Describe reports (Keys) comes from the config struct.
//
// # How a call runs
//
// The sandbox is a transport of internal/remoteproc's engine, which runs
// calls the same way for docker_exec and kubectl_exec; the sandbox gives
// it an exec in the pod's container and asks the API server why one
// failed. Every call runs under the engine's small /bin/sh wrapper in
// the target container. The wrapper reports its PID, reads the call —
// command, arguments and environment — from its stdin, runs the command
// and reports its exit status. So Request.Env reaches the remote process
// (kubectl exec has no env flag), nothing of a call appears in the exec
// request's URL (which API server audit logs record), and one wrapper
// can be started before its call: warm sessions, kept open per sandbox,
// take the exec's start (tens of milliseconds) off the call's path.
//
// The native transport keeps one client per sandbox and opens each exec
// over WebSocket (v5.channel.k8s.io), falling back to SPDY when the
// server refuses the upgrade, as kubectl does; after one refusal it goes
// to SPDY directly. The cli transport runs kubectl for every request,
// like the reference backend; the wrapper's lines let it tell the
// command's exit code from kubectl's own failure, and keep kubectl's
// messages ("command terminated with exit code N", connection errors
// before the command started) out of the hook's stderr. A connection
// that breaks while the command runs is an exception: kubectl writes its
// message to the stream the command's stderr comes on.
//
// # The resident
//
// With the native transport and resident on (the default), the sandbox
// copies the plugin's own executable into the target container when it
// opens — over an exec's stdin, into ${TMPDIR:-/tmp}/.promptkit-sandbox-UID,
// a directory the container's user owns and only it may enter, named by
// the build's fingerprint so it is copied once per container and plugin build
// — and starts it there as one long-lived exec. Every call then goes to
// that process over the exec's stdin and stdout (package resident): a
// fork and exec in the container instead of an API request, a stream
// upgrade and a runtime exec. The call's environment, stdin, exit code
// and output caps are as on the wrapper path; on a timeout or a
// cancellation the resident freezes and kills the call's process group
// and every descendant it finds by parent PID. The resident is
// non-dumpable (a call running as the same user cannot reach its
// descriptors through /proc), ends with the sandbox, and is started again
// when it dies or a selector moves the sandbox to another pod. The copy
// is the plugin binary (tens of megabytes), made once per container.
//
// Starting it is one exec when the copy is there already (a shell
// checks the file's owner and size and execs it), three the first time.
// The copy needs cat, chmod, mkdir, mv, ls (or wc) and id in the container
// besides /bin/sh, a writable temporary directory on a filesystem that allows
// execution, and the plugin's architecture. When the resident cannot
// start the plugin logs why at WARN and calls take the wrapper path
// described above; resident: false chooses that path outright. The cli
// transport never uses a resident.
//
// kubectl exec runs as the container's user, so the copy belongs to the
// user the hooks run as (unlike docker_exec's, which root owns). A hook
// that is hostile could replace it, and its replacement would serve the
// calls after the resident's next start. Where hooks must not be able to
// reach each other's calls, set resident: false: each call then runs
// under the container's own /bin/sh, which that user cannot replace.
//
// # Timeouts and cancellation
//
// Closing an exec stream does not stop the remote process. On a timeout
// or cancel the plugin runs a second exec that freezes and kills the
// wrapper's session and every descendant (found through /proc), then
// closes the stream; Spawn returns once that is done. When the command
// exits but processes it left behind hold its output open, they are
// killed the same way after 500ms, as the direct backend kills what is
// left of a process group. A process that leaves both the session and
// the process tree (setsid after a double fork) escapes this, as it
// escapes a process-group kill on the host.
//
// The target container therefore needs /bin/sh with the kill builtin
// and a mounted /proc; the sandbox checks this when it opens and says
// so when they are missing.
//
// # Errors
//
// A pod that does not exist, is not running or is terminating, a
// container the pod lacks or that does not run, a selector no Running
// and Ready pod matches, credentials refused and RBAC denials are
// could-not-start errors naming the pod, namespace and cause; an API
// server that does not answer is a transport error naming it. A
// selector's sandbox that finds its pod gone looks for another pod
// matching the selector and runs the call there, once; a call only
// retries when the command never started.
//
// # Permissions
//
// The plugin makes the requests in Calls and nothing else: get and list
// on pods, create on pods/exec (deploy/kubernetes/rbac.yaml grants
// exactly these).
package kubebox
