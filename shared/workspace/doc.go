// Package workspace is a root directory that file access cannot leave.
//
// Every path goes through an os.Root, which resolves it component by
// component relative to the root's open directory and refuses any step
// out of it — "..", a symlink chain that leaves, a symlink swapped in
// while a call runs — in the same system calls that open the file, so
// there is no window between checking a path and using it. Symlinks that
// stay inside the root work, relative or absolute. os.Root refuses every
// absolute symlink, so when it refuses a path the workspace resolves the
// path's symlinks itself: an absolute target is taken by its text, and
// one under the workspace directory (as given or as resolved) is read
// from there, while any other leads out. The path it arrives at is opened
// through the root again, so a link swapped in meanwhile is refused as
// before. A chain is judged by its final target.
//
// A path may be at most MaxPathLen (4096) bytes long and MaxPathDepth
// (64) components deep below the root, as given and, for a write, where
// its symlinks lead; one over either is refused with a *LimitError.
//
// Paths may be relative to the root or absolute inside it (under the
// directory as given or as it resolves). Anything else is refused with an
// *OutsideError, whose message says the path is outside the workspace.
package workspace
