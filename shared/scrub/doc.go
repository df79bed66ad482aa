// Package scrub removes secrets from text before it leaves sandboxd:
// values registered as secret (as they are, base64-encoded and
// URL-encoded) and credentials of well-known formats — cloud and API
// keys, tokens, JWTs, PEM private keys, passwords in URLs, and
// assignments whose name says they hold a secret. Each redaction names
// the kind of secret it removed, as [REDACTED:kind].
//
// Stream scrubs output that arrives in pieces: it releases text only up
// to the end of a line (a PEM block: to its end), so a secret cut in two
// by a read boundary is whole when it is scrubbed.
package scrub
