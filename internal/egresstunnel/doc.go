// Package egresstunnel carries a codegen sandbox's egress over a
// connection its provider makes into it, for a sandbox that can make
// none itself.
//
// On Kubernetes the provider's egress proxy (package internal/egress)
// runs in the plugin, outside the Pod, and the Pod has no egress at all:
// it cannot dial the proxy. Ingress is allowed, so the provider dials
// in, to sandboxd's Tunnel on the Pod's address (Port), and the
// connection is then used the other way round: it carries a yamux
// session on which sandboxd opens one stream for each connection an
// agent's process makes to the egress relay (127.0.0.1:3128), and the
// provider accepts those streams and hands them to its proxy. The
// session is a net.Listener on the provider's side (Dial returns it),
// so the proxy serves it as it would any listener.
//
// # Wire
//
// The provider (Dial) sends one line, its greeting:
//
//	PROMPTKIT-EGRESS/1 <token>\n
//
// where the token is sandboxd's own (the one its MCP clients send). The
// Tunnel reads at most 256 bytes of it, within 5 seconds, or closes the
// connection; it compares the token in constant time and answers one
// line, "ok\n", or "refused: <reason>\n" and closes. The reasons are "bad
// greeting", "bad token", and "another tunnel is up": the first
// authenticated session wins while it is alive, and any other is refused
// until it has closed. That keeps a process in the Pod that learnt the
// token from taking the sandbox's egress over from its provider; a
// provider that restarted finds its old session gone, closed with its
// process's socket (or, for a half-open one, by the keepalive).
//
// After "ok\n" the connection is a yamux session: sandboxd's end is the
// yamux client, which opens the streams, and the provider's the yamux
// server, which accepts them. Both ends ping (yamux's keepalive), so a
// session whose peer vanished without a word closes, and a Tunnel waits
// for the next. Closing a stream is yamux's half-close: the peer reads
// the end and closes its side.
//
// The package is part of sandboxd, whose binary and idle memory are
// budgeted: it imports the standard library and yamux, nothing else.
package egresstunnel
