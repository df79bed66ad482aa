//go:build unix

package workspace

import "syscall"

// oNoFollow is O_NOFOLLOW where there is one: OpenFile with it does not
// follow a symlink in the last component.
const oNoFollow = syscall.O_NOFOLLOW
