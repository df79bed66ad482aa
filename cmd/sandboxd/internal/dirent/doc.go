// Package dirent opens one entry of a directory sandboxd holds open as a
// descriptor, and checks that what it opened is the entry it means.
//
// sandboxd, root under --run-as, reads and changes files in trees the
// agent's user can change at any moment: the workspace (snapshots, the
// ACL grant) and the report directory's files. Between listing an entry
// and opening it, the agent may swap it for a symlink (the open would
// follow it out), a FIFO (the open would hang), a hard link to a file it
// may not read, or another file renamed over it. So every such open goes
// through here: Open never follows a symlink in the name, never blocks on
// a FIFO, never makes a terminal sandboxd's, and opens a single name
// below the directory only (no "/", no ".."); Check then fstats the
// descriptor, the file itself rather than whatever the name holds by
// then, and refuses one that is not of the type, the identity (device and
// inode as listed), the link count or the owner the caller wants.
//
// Each caller says in its own words what a refusal means (a file
// replaced, a path that changed during a snapshot, a file left private),
// so the two steps are separate and their errors are the kernel's own,
// unwrapped (errors.Is tells ELOOP from EACCES), or ErrChanged.
package dirent
