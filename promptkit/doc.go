// Package promptkit registers promptkit-sandbox's sandboxes with
// PromptKit, so a PromptKit program runs its exec hooks in containers and
// pods with one line of setup:
//
//	a, err := promptkit.New(promptkit.Options{})
//	if err != nil { ... }
//	defer a.Close()
//	if err := a.Register(nil); err != nil { ... } // PromptKit's process-wide registry
//	conv, err := sdk.Open("agent.pack.json", "chat", sdk.WithRuntimeConfig("runtime.yaml"))
//
// New finds the sandbox plugins on disk as the promptkit-sandbox CLI does
// and Register adds a PromptKit sandbox.Factory for every mode they
// serve. What PromptKit's own path leaves to the embedder the adapter
// does:
//
//   - PromptKit builds every declared sandbox again on each load
//     (sdk.Open, hooks.ResolveSandboxes) and never closes one. The
//     adapter memoises sandboxes by name, mode and resolved
//     configuration, so every load of the same entry shares one sandbox:
//     its warm pool, its resident, its plugin process. Close releases
//     them all.
//   - Register is idempotent: call it before every sdk.Open.
//   - PromptKit passes an entry's keys verbatim. The adapter resolves
//     them as promptkit-sandbox's own loader does: version, plugin and
//     open_timeout select and bound the plugin, ${NAME} expands from the
//     environment ("$${" is a literal "${"), and relative paths in mounts,
//     kubeconfig, kubectl_path and docker_path resolve against
//     Options.BaseDir (default: the working directory when New ran, which
//     is what a relative hook command means to PromptKit too).
//   - PromptKit's Response has no room for truncation. When a hook's
//     stdout or stderr passes its sandbox's output limit, the adapter
//     logs a warning naming the sandbox, the command and the stream, and
//     counts it (Stats).
//
// The adapter leaves PromptKit's own direct mode alone unless
// Options.ReplaceDirect is set; then sandboxes declared with mode direct
// are promptkit-sandbox's direct sandbox, which kills the hook's whole
// process group on timeout and caps its output. (A hook that names no
// sandbox runs in PromptKit's own direct sandbox either way: PromptKit
// builds that one itself, without the registry.) Such a hook is
// contained as our CLI contains it, in a cgroup or under a supervisor,
// only in a program whose main calls Init first; in any other, by its
// process group alone.
package promptkit
