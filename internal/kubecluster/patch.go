package kubecluster

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The kubelet, at start, sets vm.overcommit_memory=1, vm.panic_on_oom=0,
// kernel.panic=10, kernel.panic_on_oops=1 and two kernel.keys limits on the
// host (setupKernelTunables in pkg/kubelet/cm). Its only other choice,
// protectKernelDefaults, refuses to start when they differ, which they do on
// a developer's machine. A test harness must never change the machine's
// kernel settings, and no flag makes the kubelet merely warn, so we build
// from a patched copy of k8s.io/kubernetes with one line changed: the
// behaviour picked when protectKernelDefaults is off becomes
// KernelTunableWarn, which logs the difference and changes nothing.
//
// How: the build module replaces k8s.io/kubernetes with a copy of the
// module cache's tree (hard links, so it costs no space; the one patched
// file is a new file, never written through a link). go build -overlay
// would be neater but refuses files under GOMODCACHE. The patch is a string
// replacement that must match exactly once: a Kubernetes version that
// moves the line fails the build loudly instead of building a kubelet that
// changes sysctls.
var kernelTunablesPatch = struct {
	file, old, new string
}{
	file: "pkg/kubelet/cm/container_manager_linux.go",
	old:  "\tb := KernelTunableModify\n",
	new:  "\tb := KernelTunableWarn\n",
}

// patchID identifies the patch in the cache key.
func patchID() string {
	p := kernelTunablesPatch
	return p.file + "\x00" + p.old + "\x00" + p.new
}

// patchedModule makes dst a copy of the module at src (hard links where
// the filesystem allows) with the kernel-tunables patch applied.
func patchedModule(src, dst string) error {
	if err := linkTree(src, dst); err != nil {
		return fmt.Errorf("copying k8s.io/kubernetes: %w", err)
	}
	p := kernelTunablesPatch
	target := filepath.Join(dst, filepath.FromSlash(p.file))
	orig, err := os.ReadFile(target) // #nosec G304 -- a fixed file (kernelTunablesPatch.file) in the module copy made above
	if err != nil {
		return fmt.Errorf("reading the file to patch: %w", err)
	}
	patched, err := patchSource(string(orig), p.old, p.new)
	if err != nil {
		return fmt.Errorf("patching %s: %w", p.file, err)
	}
	// Remove the link first: writing through it would change the module
	// cache's file.
	if err := os.Remove(target); err != nil {
		return err
	}
	// #nosec G306 G703 -- the same fixed source file, patched, as readable as the module cache's
	if err := os.WriteFile(target, []byte(patched), 0o644); err != nil {
		return fmt.Errorf("writing the patched %s: %w", p.file, err)
	}
	return nil
}

// patchSource replaces old with new in src, insisting on exactly one match.
func patchSource(src, old, new string) (string, error) {
	if n := strings.Count(src, old); n != 1 {
		return "", fmt.Errorf("the patch expects %q exactly once, found it %d times; Version changed? update kernelTunablesPatch", old, n)
	}
	return strings.Replace(src, old, new, 1), nil
}

// linkTree recreates the tree at src under dst: directories made anew
// (writable, unlike the module cache's), files hard-linked, or copied when
// src and dst are on different filesystems.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(out, 0o755) // #nosec G301 -- a copy of the module cache's read-only tree, as readable as the original
		case !d.Type().IsRegular():
			return nil // the module cache holds regular files only
		}
		if os.Link(path, out) == nil { // #nosec G122 -- src is the module cache's copy of k8s.io/kubernetes, which only the go command writes
			return nil
		}
		return copyFile(path, out) // another filesystem, or no hard links

	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src) // #nosec G304 -- a file of the module cache's tree being copied (linkTree)
	if err != nil {
		return err
	}
	defer in.Close()
	// #nosec G302 G304 -- its copy in the build directory, as readable as the module cache's
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
