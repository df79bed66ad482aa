package sandboxdimage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// goEnv is the environment of the go commands run here: static binaries
// for Linux on this machine's architecture, with none of the caller's
// settings that could change or break the build.
func goEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
}

// goCommand runs the go command in dir with extra environment and returns
// its stdout; the error carries the command and its stderr.
func goCommand(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(goEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// toolchain is the host's Go: the image gets a copy of it.
type toolchain struct {
	version string // e.g. go1.26.8
	goroot  string
	goarch  string
}

func findToolchain(ctx context.Context) (toolchain, error) {
	// Outside any module, so no go.mod's toolchain line has a say.
	out, err := goCommand(ctx, os.TempDir(), nil, "env", "GOVERSION", "GOROOT", "GOARCH")
	if err != nil {
		return toolchain{}, fmt.Errorf("finding the Go toolchain: %w", err)
	}
	f := strings.Fields(out)
	if len(f) != 3 {
		return toolchain{}, fmt.Errorf("finding the Go toolchain: go env printed %q", out)
	}
	return toolchain{version: f[0], goroot: f[1], goarch: f[2]}, nil
}

// id names the toolchain as the image gets it.
func (tc toolchain) id() string {
	return fmt.Sprintf("%s linux/%s %s without %s and testdata", tc.version, tc.goarch, tc.goroot, strings.Join(goExcludedTop, ","))
}

// buildSandboxd builds cmd/sandboxd and its D2 helper,
// cmd/sandboxd/sandboxd-diagram (which sandboxd finds next to itself),
// from moduleDir into cacheDir and returns their paths. The outputs
// stay in the cache so that the go command, finding them up to date,
// skips the link next time.
func buildSandboxd(ctx context.Context, moduleDir, cacheDir, version string) (sandboxd, helper string, err error) {
	sandboxd = filepath.Join(cacheDir, "sandboxd-"+version)
	helper = filepath.Join(cacheDir, "sandboxd-diagram-"+version)
	for out, pkg := range map[string]string{sandboxd: "./cmd/sandboxd", helper: "./cmd/sandboxd/sandboxd-diagram"} {
		_, err := goCommand(ctx, moduleDir, nil, "build", "-trimpath",
			"-ldflags", "-s -w -X main.version="+version, "-o", out, pkg)
		if err != nil {
			return "", "", fmt.Errorf("building %s: %w", pkg, err)
		}
	}
	return sandboxd, helper, nil
}

// goTool is a Go program the image carries, built on the host at a
// pinned version.
type goTool struct {
	name    string // the binary's name
	pkg     string // the package go install builds
	version string
}

var (
	staticcheckTool = goTool{"staticcheck", "honnef.co/go/tools/cmd/staticcheck", StaticcheckVersion}
	goplsTool       = goTool{"gopls", "golang.org/x/tools/gopls", GoplsVersion}
)

// install installs the tool into cacheDir, once per Go toolchain (both
// must understand the Go they read), and returns its path.
func (g goTool) install(ctx context.Context, cacheDir string, tc toolchain) (string, error) {
	out := filepath.Join(cacheDir, g.name+"-"+g.version+"-"+tc.version)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	gobin, err := os.MkdirTemp(cacheDir, "gobin-")
	if err != nil {
		return "", fmt.Errorf("installing %s: %w", g.name, err)
	}
	defer os.RemoveAll(gobin)
	_, err = goCommand(ctx, os.TempDir(), []string{"GOBIN=" + gobin}, "install", "-trimpath",
		"-ldflags", "-s -w", g.pkg+"@"+g.version)
	if err != nil {
		return "", fmt.Errorf("installing %s: %w", g.name, err)
	}
	if err := os.Rename(filepath.Join(gobin, g.name), out); err != nil {
		return "", fmt.Errorf("installing %s: %w", g.name, err)
	}
	return out, nil
}

// copyGoroot copies the toolchain into dst, leaving out goExcluded. Files
// are hard-linked where the file system allows (the build context is
// thrown away after the build, and nothing writes to it).
func copyGoroot(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || slices.Contains(goExcludedTop, rel)) {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target) // #nosec G122 -- copies the build machine's Go distribution (GOROOT), which nothing else writes meanwhile
		case d.Type().IsRegular():
			return linkOrCopy(path, target, info.Mode().Perm())
		}
		return nil // no devices or sockets in a Go distribution
	})
}

func linkOrCopy(src, dst string, perm fs.FileMode) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src) // #nosec G304 -- a file of the Go distribution being copied
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm) // #nosec G304 -- its copy, made O_EXCL in the image's build context
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// errNoMmdebstrap says how to get the tool the base is made with.
var errNoMmdebstrap = errors.New("mmdebstrap is not installed: apt-get install mmdebstrap (make sandboxd-image does, as root)")
