// Package snapshot keeps named snapshots of a workspace in a private git
// repository outside it, and restores the workspace to one of them.
//
// The repository and its index live in a directory of sandboxd's own
// (mode 0700), never in the workspace: the workspace's .git is neither
// read nor written, and paths named .git at any depth are left out of
// snapshots and never touched by a restore.
//
// git never reads the workspace: sandboxd walks it itself, opening each
// directory with O_NOFOLLOW from the one above and each file with
// O_NOFOLLOW from its directory, checks the descriptor is the entry it
// listed, and writes the blobs into the store; git only sets the index to
// them and makes trees and commits. A directory swapped for a symlink
// mid-walk is left out, never followed. A file whose stat data is as it
// was at the last snapshot (and whose change time is not too recent to
// tell) is not read again.
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
