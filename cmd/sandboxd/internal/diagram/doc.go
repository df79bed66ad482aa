// Package diagram renders diagram sources (Graphviz DOT, D2) to SVG or
// PNG for an agent to look at, with nothing of the host's files reachable
// from the source.
//
// DOT runs Debian's dot in Graphviz's own safe mode (SERVER_NAME set,
// GV_FILE_PATH unset: every image, shapefile and HTML <IMG> is refused
// before it is opened), from an empty private directory, with an empty
// environment, a time limit that kills its process group, a memory
// limit and a cap on its output. goccy/go-graphviz (WebAssembly) was
// the other choice: it would add a ~10 MB wasm blob and an interpreter
// to sandboxd for what a Debian package already does, and its fonts and
// PNG differ from the dot an agent's own docs describe.
//
// D2 compiles and renders with oss.terrastruct.com/d2 (pure Go) in a
// child process of this executable (package child) under the same limits
// as dot: its compiler takes time cubic in a source's nesting, its dagre
// layout runs in a JavaScript interpreter that cannot be interrupted,
// and only a process can be killed. Both languages' sources are refused
// past a nesting limit before any process starts. Its imports are given a file system that holds
// nothing, so an "...@file" import is refused; icons are only URLs
// written into the SVG, never fetched.
//
// Mermaid has no renderer here (mermaid-cli needs Node packages and a
// browser that the registries on these machines do not offer); asking
// for it is a clear error.
package diagram
