package plugin

import (
	"context"
	"errors"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing/grpctrace"
)

// ProtocolVersion is the version of the plugin protocol (shared/proto)
// this package speaks; go-plugin negotiates it through VersionedPlugins.
const ProtocolVersion = 1

// PluginKey is the name the sandbox service is dispensed under.
const PluginKey = "sandbox"

// Environment variables of the protocol.
const (
	// EnvLogLevel sets the level of a plugin's default logger (trace,
	// debug, info, warn, error; default info). The host sets it to its
	// own level when it launches a plugin.
	EnvLogLevel = "PROMPTKIT_PLUGIN_LOG_LEVEL"
	// EnvTLSFD names the inherited file descriptor on which the host
	// passes a plugin its TLS material (see LaunchTLS).
	EnvTLSFD = "PROMPTKIT_PLUGIN_TLS_FD"
	// EnvExecFD names the inherited descriptor of the plugin's own
	// binary, when the host ran it through one (a lock file in force:
	// the host runs the very file it hashed). Serve closes it, so the
	// commands a plugin runs do not inherit it.
	EnvExecFD = "PROMPTKIT_PLUGIN_EXEC_FD"
	// EnvCallsFD names the inherited descriptor of the plugin's end of
	// its calls socket (see CallsSocket), on which the host sends the
	// Calls stream's messages outside gRPC. Serve takes it at once, so
	// the commands a plugin runs do not inherit it.
	EnvCallsFD = "PROMPTKIT_PLUGIN_CALLS_FD"
	// EnvDebug=1 makes Serve run without a host, for a debugger: it
	// prints the EnvReattach value a host needs to attach to it.
	EnvDebug = "PROMPTKIT_PLUGIN_DEBUG"
	// EnvReattach holds the JSON a debug-mode plugin prints; a host that
	// is given it attaches to those plugins instead of launching them
	// (see ParseReattach).
	EnvReattach = "PROMPTKIT_REATTACH_PLUGINS"
)

// Handshake is what host and plugin must agree on before anything else.
// The magic cookie is not a secret, only a guard against running a plugin
// by hand (mutual TLS is the security).
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "PROMPTKIT_SANDBOX_PLUGIN",
	MagicCookieValue: "220309341b6df48c23fb68a852e95cdbdbc945fa3bc39f8f",
}

// ChunkSize is the largest stdin, stdout or stderr payload one message
// carries, well below gRPC's 4 MiB default message limit. Larger chunks
// mean fewer messages per megabyte; beyond 1 MiB nothing is gained.
const ChunkSize = 1 << 20

// maxMessage is the largest message either side accepts: gRPC's default
// for servers, applied to the host too, where go-plugin would otherwise
// allow 2 GiB from a misbehaving plugin.
const maxMessage = 4 << 20

// PluginSet is the host's view of what a promptkit-sandbox plugin serves,
// by protocol version, for go-plugin's ClientConfig.VersionedPlugins.
// Dispensing PluginKey yields a *Client.
//
// A client that reattaches (ClientConfig.Reattach) must set Plugins as
// well, since go-plugin skips version negotiation when reattaching and
// only looks at Plugins:
//
//	Plugins: plugin.PluginSet()[plugin.ProtocolVersion],
func PluginSet() map[int]goplugin.PluginSet {
	return pluginSet(nil)
}

func pluginSet(srv *server) map[int]goplugin.PluginSet {
	return map[int]goplugin.PluginSet{
		ProtocolVersion: {PluginKey: &grpcPlugin{srv: srv}},
	}
}

// grpcPlugin adapts the service to go-plugin. srv is set on the plugin's
// side only.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	srv *server
}

var _ goplugin.GRPCPlugin = (*grpcPlugin)(nil)

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	if p.srv == nil {
		return errors.New("plugin: the host's plugin set cannot serve; plugins call plugin.Serve")
	}
	sandboxpb.RegisterSandboxServer(s, p.srv)
	sandboxpb.RegisterProviderServer(s, &providerServer{srv: p.srv})
	return nil
}

// GRPCClient returns a *Client. ctx ends when go-plugin sees the plugin
// process exit, which fails every call in flight at once.
func (p *grpcPlugin) GRPCClient(ctx context.Context, _ *goplugin.GRPCBroker, conn *grpc.ClientConn) (interface{}, error) {
	return newClient(ctx, conn), nil
}

// flowWindow is the HTTP/2 flow-control window of every stream and
// connection, both ways. gRPC's default starts each stream at 64 KiB and
// grows it only by estimate, so a megabyte of output would wait on a
// dozen window updates; a window larger than ChunkSize lets a whole
// response flow at once. Setting it on both sides turns the estimator off.
const flowWindow = 16 << 20

// transportBuffer sizes the connection's read and write buffers: a chunk
// goes out in a few writes instead of dozens.
const transportBuffer = 256 << 10

// DialOptions are the gRPC options the host dials a plugin with; they
// match the plugin's server options, and carry the caller's trace
// context to the plugin in each call's metadata (see shared/tracing).
func DialOptions() []grpc.DialOption {
	return append([]grpc.DialOption{
		grpc.WithInitialWindowSize(flowWindow),
		grpc.WithInitialConnWindowSize(flowWindow),
		grpc.WithReadBufferSize(transportBuffer),
		grpc.WithWriteBufferSize(transportBuffer),
	}, grpctrace.ClientInterceptors()...)
}

func serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(flowWindow),
		grpc.InitialConnWindowSize(flowWindow),
		grpc.ReadBufferSize(transportBuffer),
		grpc.WriteBufferSize(transportBuffer),
		grpc.NumStreamWorkers(4),
	}
}
