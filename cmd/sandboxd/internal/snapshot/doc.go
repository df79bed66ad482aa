// Package snapshot keeps named snapshots of a workspace in a private git
// repository outside it, and restores the workspace to one of them.
//
// The repository and its index live in a directory of sandboxd's own
// (mode 0700), never in the workspace: the workspace's .git is neither
// read nor written, and paths named .git at any depth are left out of
// snapshots and never touched by a restore. The index persists between
// snapshots, so git's stat cache rehashes only the files that changed.
//
// A snapshot holds every regular file and symlink up to a size cap,
// gitignored or not: the workspace's .gitignore and .gitattributes have
// no say (git runs with no excludes, no attributes from the tree, no
// global or system config, no hooks and no fsmonitor). Files over the cap,
// and files that are neither regular files nor symlinks, are skipped and
// reported; a restore leaves them alone.
//
// A restore first snapshots the current state, then makes the workspace
// equal the snapshot: changed files are rewritten, files added since are
// removed, removed ones come back. It walks the workspace without
// following any symlink (each directory is opened with O_NOFOLLOW below
// the last), writes through a temporary file renamed into place, so a
// symlink at a path is replaced rather than written through.
package snapshot
