// Package server is sandboxd's MCP server: the tools a coding agent calls
// (files, search, shell) registered on mcp-go, served over Streamable HTTP
// at /mcp, legacy HTTP+SSE at /sse and over stdio, behind a gate that
// checks the bearer token, the Origin, the Host and the body size before
// anything reaches a tool. Every tool result and every error message is
// scrubbed of secrets on its way out.
package server
