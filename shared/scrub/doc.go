// Package scrub removes secrets from text before it leaves a process:
// sandboxd's results, and what the exec-hook runtime quotes of a hook's
// output. It redacts values registered as secret (as they are,
// base64-encoded and URL-encoded) and credentials of well-known formats —
// cloud and API keys, tokens, JWTs, PEM private keys, passwords in URLs,
// and assignments whose name says they hold a secret. Each redaction
// names the kind of secret it removed, as [REDACTED:kind]. Other
// transformations of a value (hex, another encoding, a value split over
// lines) and secrets in no known format are not recognised.
//
// Stream scrubs output that arrives in pieces: it releases text only up
// to the end of a line (a PEM block: to its end), so a secret cut in two
// by a read boundary is whole when it is scrubbed.
//
// Excerpt quotes the start of output: it scrubs before it cuts, so a
// secret across the cut is redacted whole, and when the text it reads was
// itself cut short, a secret cut short at its end is redacted from its
// start.
package scrub
