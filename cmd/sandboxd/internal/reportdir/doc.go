// Package reportdir is where a tool sandboxd runs as the agent's user
// writes a file sandboxd then reads as itself: a JUnit report, a cover
// profile.
//
// The agent's code runs inside that tool and may swap the file for a
// symlink (or a hard link) once it has written it; sandboxd, root under
// --run-as, would then read whatever the link points at and hand it back
// in its answer. So the file is made by sandboxd, empty and owned by the
// agent's user, in a directory sandboxd owns (mode 0711: the agent may
// reach the file by name but neither list the directory nor rename,
// remove or add anything in it). The tool can write the file; it cannot
// replace it. When sandboxd reads it back, it opens it relative to the
// directory's descriptor with O_NOFOLLOW and O_NONBLOCK and keeps it
// only if the descriptor is still the very file it made (same device and
// inode), a regular file with one link, owned by the agent's user: what
// comes back is what the agent's user wrote, nothing it could not read.
package reportdir
