// Package config loads the exec-hook part of a PromptKit RuntimeConfig:
// spec.plugins, spec.sandboxes and spec.hooks. Everything else in the file
// is tolerated and ignored, so one file serves PromptKit and this runtime.
//
// Loading validates the whole file in one pass and reports every problem
// at once, each with file, line, column and entry, as an *Error. No input
// makes it panic.
//
// Rules that are easy to get wrong:
//
//   - Sandbox config values (every key of a sandbox entry other than mode,
//     version and plugin, at any depth) expand ${NAME} from the environment.
//     An unset NAME is an error, not an empty string; "$${" stands for a
//     literal "${"; a "$" not followed by "{" is kept as written. Nothing
//     else in the file expands.
//   - A hook's command that contains a "/" but is not absolute resolves
//     against the config file's directory when the hook runs on the host
//     (the built-in direct sandbox, or a declared sandbox with mode
//     direct), because it names a file next to the config. In any other
//     sandbox it names a path inside the container or pod and is kept
//     verbatim. A bare name ("python3") is always kept for PATH lookup.
//   - Relative spec.plugins.dirs resolve against the config file's
//     directory.
//   - Scalars are read as strings where a string is wanted (as yaml.v3 does
//     when decoding into a string field), so `args: [-n, 5]` is fine.
//   - Anchors, aliases and merge keys ("<<") work as in YAML; expansion is
//     bounded so a small file cannot blow up into a huge one.
package config
