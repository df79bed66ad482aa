package dockertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// rgPath is the host's ripgrep, which sandboxd's Glob and Grep run.
const rgPath = "/usr/bin/rg"

// sandboxdFiles are the files of the Sandboxd image: sandboxd, compiled
// static from the module the tests run in, and rg with the shared
// libraries ldd says it loads, each at its own path. Built once per
// process.
var sandboxdFiles = func() func(context.Context) (map[string][]byte, error) {
	var once sync.Once
	var files map[string][]byte
	var err error
	return func(ctx context.Context) (map[string][]byte, error) {
		once.Do(func() { files, err = collectSandboxd(ctx) })
		return files, err
	}
}()

func collectSandboxd(ctx context.Context) (map[string][]byte, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return nil, err
	}
	out, err := os.MkdirTemp("", "promptkit-sandboxd-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	bin := filepath.Join(out, "sandboxd")
	args := append([]string{"build"}, hookBuildFlags...)
	if _, err := goCommand(ctx, root, append(args, "-o", bin, "./cmd/sandboxd")...); err != nil {
		return nil, fmt.Errorf("compiling sandboxd: %w", err)
	}
	files := map[string][]byte{}
	if files["/usr/local/bin/sandboxd"], err = os.ReadFile(bin); err != nil { // #nosec G304 -- the sandboxd the go build above just wrote
		return nil, err
	}
	libs, err := sharedLibraries(ctx, rgPath)
	if err != nil {
		return nil, fmt.Errorf("ripgrep for the sandboxd test image (apt-get install ripgrep): %w", err)
	}
	for _, p := range append(libs, rgPath) {
		if files[p], err = os.ReadFile(p); err != nil { // #nosec G304 -- ripgrep and the libraries ldd lists for it, copied into a test image
			return nil, err
		}
	}
	return files, nil
}

// moduleRoot is the directory of the main module's go.mod, as the go
// command sees it from the working directory (a test's package).
func moduleRoot(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMOD")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(b))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("the sandboxd test image is built from this module: run the test inside it")
	}
	return filepath.Dir(mod), nil
}

// sharedLibraries lists the libraries ldd says bin loads, the dynamic
// loader included, by the paths bin asks for them at.
func sharedLibraries(ctx context.Context, bin string) ([]string, error) {
	b, err := exec.CommandContext(ctx, "ldd", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", bin, err)
	}
	var libs []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[1] == "=>" && filepath.IsAbs(f[2]):
			libs = append(libs, f[2])
		case len(f) >= 1 && filepath.IsAbs(f[0]):
			libs = append(libs, f[0]) // the loader: "/lib64/ld-linux-x86-64.so.2 (0x...)"
		}
	}
	return libs, nil
}
