// Package plugin is the protocol glue between promptkit-sandbox and its
// sandbox plugins, both sides of it.
//
// A plugin's main is one call:
//
//	func main() {
//		plugin.Serve(plugin.ServeOpts{Name: "docker", Version: version,
//			Modes: map[string]sandbox.Factory{"docker_run": run.Factory}})
//	}
//
// Serve speaks HashiCorp go-plugin over gRPC (the service in shared/proto)
// with per-launch mutual TLS whose material the host passes on an
// inherited pipe (see LaunchTLS). The host launches and supervises the
// process with go-plugin (package plugin/host), dispenses PluginKey, and
// gets a *Client: Describe says what the plugin serves, Open returns a
// *RemoteSandbox, which is a sandbox.Sandbox whose typed errors, output
// caps and cancellation behave as if the backend ran in-process.
//
// Large stdin, stdout and stderr travel in chunks of ChunkSize, so no
// message comes near gRPC's 4 MiB default limit, which only the plugin's
// own server could raise.
//
// Tracing: the host's calls carry the caller's W3C trace context in
// their gRPC metadata (DialOptions); the plugin's server makes each
// Spawn a child span of it, under which backends start theirs, and Serve
// exports them when OTEL_EXPORTER_OTLP_ENDPOINT is set (shared/tracing,
// docs/operations.md).
//
// Debugging: a plugin started with PROMPTKIT_PLUGIN_DEBUG=1 serves
// without a host, prints a PROMPTKIT_REATTACH_PLUGINS=... line, and a host
// given that value attaches to it (ParseReattach) instead of launching.
package plugin
