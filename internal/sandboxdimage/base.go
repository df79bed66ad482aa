package sandboxdimage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ensureBase imports the Debian root filesystem as ref unless the engine
// has it.
func ensureBase(ctx context.Context, o Options, ref string) error {
	have, err := imageLabel(ctx, ref, baseLabel)
	if err != nil {
		return err
	}
	if have != "" {
		// One made before imports were checked may be an empty one.
		size, err := docker(ctx, "image", "inspect", "--format", "{{.Size}}", ref)
		if err != nil || strings.TrimSpace(size) != "0" {
			return err
		}
		o.logf("base %s is empty (an import cut short): making it again", ref)
		if _, err := docker(ctx, "image", "rm", ref); err != nil {
			return err
		}
	}
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		return errNoMmdebstrap
	}
	o.logf("making the Debian %s root filesystem with mmdebstrap (%s) as %s", debian.Suite, strings.Join(debian.Packages, " "), ref)
	start := time.Now()
	if err := importBase(ctx, o, ref); err != nil {
		return fmt.Errorf("making the base image %s: %w", ref, err)
	}
	o.logf("base %s made in %s", ref, time.Since(start).Round(time.Second))
	return nil
}

// importBase pipes mmdebstrap's tarball into docker import, under a
// name of its own until the import is whole: a build cut short (its
// process killed, a test's timeout) closes the pipe, and docker import
// would take the tarball so far, empty, for the whole root filesystem
// and give it the name ensureBase trusts.
func importBase(ctx context.Context, o Options, ref string) error {
	partial := ref + "-partial"
	if err := importTarball(ctx, o, partial); err != nil {
		return err
	}
	defer func() { _, _ = docker(context.WithoutCancel(ctx), "image", "rm", partial) }()
	size, err := docker(ctx, "image", "inspect", "--format", "{{.Size}}", partial)
	if err != nil {
		return err
	}
	if strings.TrimSpace(size) == "0" {
		return fmt.Errorf("docker import made an empty image of mmdebstrap's tarball")
	}
	if _, err := docker(ctx, "tag", partial, ref); err != nil {
		return err
	}
	return nil
}

// importTarball imports mmdebstrap's tarball as ref.
func importTarball(ctx context.Context, o Options, ref string) error {
	args := []string{"--variant=essential", "--include=" + strings.Join(debian.Packages, ",")}
	for _, opt := range debian.DpkgOpts {
		args = append(args, "--dpkgopt="+opt)
	}
	args = append(args, debian.Suite, "-")
	args = append(args, debian.Sources...)
	mm := exec.CommandContext(ctx, "mmdebstrap", args...)
	imp := exec.CommandContext(ctx, "docker", "import", "--change", "LABEL "+baseLabel+"="+debian.Suite, "-", ref)
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	var mmErr, impErr bytes.Buffer
	mm.Stdout, mm.Stderr = w, io.MultiWriter(&mmErr, o.Log)
	imp.Stdin, imp.Stderr = r, &impErr
	if err := imp.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return fmt.Errorf("docker import: %w", err)
	}
	_ = r.Close()
	mmRunErr := mm.Run()
	_ = w.Close() // docker import sees the end of the tarball
	impRunErr := imp.Wait()
	if mmRunErr != nil {
		return fmt.Errorf("mmdebstrap %s: %w: %s", strings.Join(args, " "), mmRunErr, tail(mmErr.String()))
	}
	if impRunErr != nil {
		return fmt.Errorf("docker import: %w: %s", impRunErr, tail(impErr.String()))
	}
	return nil
}

// tail is the end of a command's output, enough to say what went wrong.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}
