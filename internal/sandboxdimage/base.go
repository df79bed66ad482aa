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
	if have, err := imageLabel(ctx, ref, baseLabel); err != nil || have != "" {
		return err
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

// importBase pipes mmdebstrap's tarball into docker import.
func importBase(ctx context.Context, o Options, ref string) error {
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
		r.Close()
		w.Close()
		return fmt.Errorf("docker import: %w", err)
	}
	r.Close()
	mmRunErr := mm.Run()
	w.Close() // docker import sees the end of the tarball
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
