package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// owner is a file's user and group.
type owner struct{ uid, gid int }

// SetOwner makes uid:gid the owner of every file and directory WriteFile
// creates, so a workspace whose tools run as root stays the user's own
// (the agent's commands run as that user). It takes effect only for a
// root process. A file WriteFile replaces keeps its owner whatever
// SetOwner says: the write goes to a new file renamed over it.
func (w *Workspace) SetOwner(uid, gid int) { w.newOwner = &owner{uid, gid} }

// ownerOf is fi's owner.
func ownerOf(fi fs.FileInfo) *owner {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return &owner{int(st.Uid), int(st.Gid)}
	}
	return nil
}

// chownNew gives f, a file WriteFile made, the owner it should have:
// the replaced file's (was), else the one SetOwner named. Only root can,
// and only root needs to: anyone else's files are their own already.
func (w *Workspace) chownNew(f *os.File, was *owner) error {
	if os.Geteuid() != 0 {
		return nil
	}
	o := was
	if o == nil {
		o = w.newOwner
	}
	if o == nil {
		return nil
	}
	return f.Chown(o.uid, o.gid)
}

// missingDirs lists the directories of dir, relative to the root, that
// do not exist yet, outermost first.
func (w *Workspace) missingDirs(dir string) []string {
	var missing []string
	for d := dir; d != "." && d != "/" && d != ""; d = filepath.Dir(d) {
		if _, err := w.root.Lstat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
	}
	return missing
}

// chownDirs gives the directories WriteFile created the owner SetOwner
// named (root only).
func (w *Workspace) chownDirs(created []string) error {
	if os.Geteuid() != 0 || w.newOwner == nil {
		return nil
	}
	for _, d := range created {
		if err := w.root.Lchown(d, w.newOwner.uid, w.newOwner.gid); err != nil {
			return err
		}
	}
	return nil
}
