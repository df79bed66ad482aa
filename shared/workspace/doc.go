// Package workspace is a root directory that file access cannot leave.
//
// Every path goes through an os.Root, which resolves it component by
// component relative to the root's open directory and refuses any step
// out of it — "..", an absolute symlink, a symlink chain that leaves, a
// symlink swapped in while a call runs — in the same system calls that
// open the file, so there is no window between checking a path and using
// it. Relative symlinks that stay inside the root work; absolute symlinks
// are refused wherever they point, as os.Root refuses them.
//
// Paths may be relative to the root or absolute inside it (under the
// directory as given or as it resolves). Anything else is refused with an
// *OutsideError, whose message says the path is outside the workspace.
package workspace
