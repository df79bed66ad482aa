// Package goedit makes structural edits to Go source: it replaces a
// function's body or signature, or inserts a method after another, by
// the syntax tree's positions rather than by matching text.
//
// An agent's text is parsed as exactly the node it stands for and
// nothing more: a body that closes its function and opens another, a
// "method" that is two declarations, a signature that carries a body,
// each is refused before anything is spliced. The result is gofmt'd and
// parsed again, so an edit can only ever leave a file that parses.
//
// Input is bounded before it is parsed: its size, how deep its brackets
// nest and how many operators one expression chains (see MaxNesting),
// by one pass of the scanner. Isolated makes the edits in a child
// process with a memory and a time limit, as what the parser, gofmt and
// the type checker spend grows faster than the input.
//
// The package works on bytes; reading and writing files (the workspace,
// the read-before-write ledger) is the caller's.
package goedit
