package dockertest

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// readBusybox returns the busybox binary the images are built around.
func readBusybox() ([]byte, error) {
	return readStatic(busyboxPath)
}

// readStatic returns the binary at path, refusing one that is dynamically
// linked: a FROM scratch image has no libc for it to load.
func readStatic(path string) ([]byte, error) {
	data, err := os.ReadFile(path) // #nosec G304 -- Debian's busybox-static binary (busyboxPath)
	if err != nil {
		return nil, fmt.Errorf("reading busybox: %w (install Debian's busybox-static: apt-get install -y busybox-static)", err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s is not an ELF binary: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return nil, fmt.Errorf("%s is dynamically linked and cannot run FROM scratch; install Debian's busybox-static (apt-get install -y busybox-static)", path)
		}
	}
	return data, nil
}

// goEnv is the environment of the go commands that compile the hooks: a
// static build for the target, with none of the caller's settings that
// could break a throwaway module (a workspace, vendoring, a toolchain
// switch that would try to download).
func goEnv() []string {
	return append(os.Environ(),
		"CGO_ENABLED=0",
		"GOOS=linux",
		"GOARCH="+strings.TrimPrefix(hookTarget(), "linux/"),
		"GOFLAGS=",
		"GOWORK=off",
		"GOTOOLCHAIN=local",
	)
}

// goCommand runs the go command in dir and returns its stdout.
func goCommand(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// goToolchain names the Go toolchain that would compile the hooks, which
// decides their bytes as much as their sources do.
func goToolchain(ctx context.Context) (string, error) {
	// Outside any module: the caller's go.mod must not get a say.
	out, err := goCommand(ctx, os.TempDir(), "env", "GOVERSION")
	if err != nil {
		return "", fmt.Errorf("finding the Go toolchain for the test hooks: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// hookModule is the go.mod of the throwaway module the hooks are compiled
// in; they use the standard library only.
const hookModule = "module promptkit-test-hooks\n\ngo 1.22\n"

// compileHooks writes the embedded hook sources into srcDir as a module of
// their own and compiles every hook into outDir, one binary per hook.
func compileHooks(ctx context.Context, srcDir, outDir string) error {
	err := fs.WalkDir(hookSources, "hooks", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(srcDir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755) // #nosec G301 -- the test hooks' source tree, compiled by the go command
		}
		data, err := hookSources.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644) // #nosec G306 -- the test hooks' embedded sources, nothing secret
	})
	if err != nil {
		return fmt.Errorf("writing the test hook sources: %w", err)
	}
	if err := os.WriteFile(filepath.Join(srcDir, "go.mod"), []byte(hookModule), 0o644); err != nil { // #nosec G306 -- the test hooks' go.mod, nothing secret
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil { // #nosec G301 -- where the test hooks are compiled, for the Docker build context
		return err
	}
	args := append([]string{"build"}, hookBuildFlags...)
	args = append(args, "-o", outDir+string(filepath.Separator), "./hooks/...")
	if _, err := goCommand(ctx, srcDir, args...); err != nil {
		return fmt.Errorf("compiling the test hooks: %w", err)
	}
	return nil
}
