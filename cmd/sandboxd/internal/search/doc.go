// Package search is sandboxd's Glob and Grep: file listing and content
// search inside a workspace, done by ripgrep.
//
// ripgrep does the walking for both, so both see the files git would:
// nested .gitignore files, .git/info/exclude and the global excludes file
// are honoured whether or not the workspace is a git repository
// (--no-require-git), dotfiles are included (--hidden) but the .git
// directory never is, and symbolic links are not followed while walking
// (so a link cannot lead the walk out of the workspace). A path argument
// is checked against the workspace before rg is pointed at it.
//
// The agent can swap any directory for a symlink between that check and
// rg's open, so with a Credential (sandboxd --run-as) rg runs as the
// agent's user and reaches nothing the agent could not read itself. What
// this package reads of the files rg names follows no link out of the
// workspace: Grep vets lines through the workspace's os.Root, and Glob
// stats and watches through a Stater (openat2 beneath the workspace).
//
// A user's glob filter is never handed to rg as -g: rg checks -g globs
// before its ignore rules, so -g '*.env' would search a gitignored
// secrets.env. A glob on file names becomes an rg file type instead (types
// are checked after the ignore rules); any other glob filters rg's output
// here, with doublestar.
//
// Glob sorts by modification time, and on a large tree the stat calls
// cost as much as rg's walk, so the times it reads are remembered and
// kept fresh with inotify (see mtimeCache): a repeated Glob stats only
// what changed.
package search
