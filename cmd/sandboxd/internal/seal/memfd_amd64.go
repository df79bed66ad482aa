package seal

// sysMemfdCreate is memfd_create(2)'s number, which package syscall
// does not name on amd64 (golang.org/x/sys/unix does, but importing it
// would hold the seal back; see the package comment).
const sysMemfdCreate = 319
