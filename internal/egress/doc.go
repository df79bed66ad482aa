// Package egress is the host-side proxy through which a codegen sandbox,
// which has no network of its own, reaches the few hosts its entry
// allows.
//
// The sandbox gets one channel out (a unix socket, or a loopback port,
// handed to it as HTTP_PROXY and HTTPS_PROXY) and no route and no DNS
// beside it: the proxy resolves names itself. Every request names its
// host and port, as an absolute URL (plain HTTP) or a CONNECT target
// (HTTPS), and the proxy lets it through only when a [Rule] allows that
// host and port; anything else is answered 403 with a line an agent can
// read, naming the host and what is allowed. There is no default allow.
//
// A rule may carry a credential: the name of a secret and the header it
// goes in ({host: api.github.com, secret: GITHUB_TOKEN, header:
// Authorization, format: "Bearer %s"}). The proxy adds the header on the
// way out, overwriting any value the sandbox sent, so the credential is
// never inside the sandbox: not in its environment, its files or its
// memory. What comes back from such a host (headers and body) is
// scrubbed of every secret the proxy holds with shared/scrub, and asked
// for without compression so that the scrubbing sees the bytes; a
// response the upstream compresses anyway is refused (502), not passed
// on unscrubbed.
//
// # TLS interception, and its price
//
// To add a header to an HTTPS request the proxy must read it, so for a
// host whose rule carries a credential it terminates TLS: it answers the
// CONNECT itself and presents a certificate for that host signed by a CA
// that the proxy made in memory when it started (ECDSA P-256, valid for
// days, never written to disk). The sandbox is given that CA's
// certificate ([Proxy.CACertPEM]) to trust; no other sandbox and nothing
// on the host trusts it, and the CA is name-constrained to the hosts of
// the credential rules, so its key could sign for nothing else even if
// it leaked. The proxy then opens its own TLS connection to the real
// host, verified against the system roots (or [Options.UpstreamRoots]).
//
// Every other allowed HTTPS host gets a plain CONNECT tunnel: the proxy
// splices bytes and never sees inside, so TLS is end to end between the
// sandbox and the host. The trade-offs:
//
//   - On an intercepted host the sandbox's client sees the proxy's
//     certificate, not the host's: a client that pins the host's
//     certificate or key, or that ignores the system trust store and
//     the CA bundle variables, fails there. Only the hosts with a
//     credential rule are affected.
//   - An intercepted host gets HTTP/1.1 only, and upgrades (WebSocket)
//     are not carried.
//   - Inside a plain tunnel the proxy cannot see the Host header or the
//     SNI the client sends after the handshake, so a CDN that serves
//     many names on one address could be reached under another name
//     (domain fronting). Intercepted hosts do not have this hole: a
//     request whose Host disagrees with the CONNECT target is refused.
//   - A credential rule without a port also applies to port 80: the
//     credential then crosses the network in clear text. Give such rules
//     ":443" to keep them to TLS.
//
// # Bounds
//
// The proxy caps concurrent connections, times out slow request headers
// and idle connections and tunnels, and refuses by default to dial
// loopback, link-local and unspecified addresses (so an allowed name
// that resolves to the host's own services or to a cloud metadata
// endpoint leads nowhere); a caller's [Options.Dial] replaces that
// check along with the dialer.
package egress
