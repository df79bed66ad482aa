// Package symbols is sandboxd's search_code: an index of the symbols
// (functions, methods, types, variables, constants...) defined in a
// workspace's Go, Python, Rust, TypeScript and JavaScript files, read by
// universal-ctags, and a ranked search over their names.
//
// The index is built on the first query and kept fresh after it: every
// directory holding an indexed file is watched (search.DirWatcher), and
// before each query the changes reported since the last one are applied,
// file by file. A changed file is stat'ed and, if its size or time moved,
// read by ctags again; a new file, a new directory or a changed ignore
// file has its directory listed again by ripgrep, so what is indexed is
// what Glob would list (.gitignore honoured, links not followed). A build
// that failed is not remembered: the next query tries again.
//
// ctags runs with --options=NONE (no configuration from the workspace or
// the environment), without following links, as the agent's user when
// Options.Credential says (the agent can swap a directory for a symlink
// between the listing and ctags' read), under a timeout that kills its
// whole process group, and with its output capped. Files are stat'ed and
// watched through a search.Stater, which follows no link.
package symbols
