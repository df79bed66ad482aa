// Package tracing carries OpenTelemetry trace context across the plugin
// hop and makes the spans of the work on the far side of it.
//
// The trace flows: the host starts a span per hook call (package hooks);
// the plugin client's gRPC interceptors (ClientInterceptors, which
// plugin.DialOptions install) put its W3C traceparent and tracestate in
// the call's outgoing gRPC metadata; the plugin's server takes them out
// (Extract) and starts its span as a child; a backend starts its own
// child span (StartCall) with the provider of the span its context carries,
// so it needs no provider of its own. Only metadata changes on the wire:
// a plugin or host built before this ignores it.
//
// A plugin process exports its spans over OTLP/HTTP when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set in its
// environment (NewProviderFromEnv). The host names the OTEL_* variables
// in the plugin's environment itself (PluginEnv), so a host configured by
// them has its plugins export to the same collector. (go-plugin also
// passes the host's whole environment on unless told not to; tracing
// does not rely on that.)
package tracing
