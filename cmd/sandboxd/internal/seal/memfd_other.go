//go:build linux && !amd64

package seal

import "syscall"

const sysMemfdCreate = syscall.SYS_MEMFD_CREATE
