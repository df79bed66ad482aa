// Package lsp runs language servers (gopls, pylsp) for a workspace and
// asks them where a symbol is defined, where it is used, and how to
// rename it.
//
// It speaks JSON-RPC 2.0 over the server's stdin and stdout with
// Content-Length framing, with a small client of its own. One server runs
// per workspace and language, started on the first question, restarted
// when it died, and stopped with its whole process group when idle or
// closed. Each question is asked of what is on disk now: the documents
// the server has open are compared with the files before every request,
// and changes sandboxd made or a shell may have made are reported first,
// so an answer never comes from a stale copy.
package lsp
