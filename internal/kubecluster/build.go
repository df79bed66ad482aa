package kubecluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/flock"
)

// Binaries are the paths of the built components.
type Binaries struct {
	Dir string // the cache directory holding them
}

// Path returns the path of the named component (one of Components).
func (b Binaries) Path(name string) string { return filepath.Join(b.Dir, name) }

// logf reports progress; build output goes through it too, so that a test
// log shows what the go command said.
type logf func(format string, args ...any)

// CacheRoot is where built binaries are kept: <user cache dir>/
// promptkit-sandbox/kube. Removing it (or a version directory in it) is
// safe whenever no cluster runs; the next Start builds again.
func CacheRoot() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory: %w", err)
	}
	return filepath.Join(dir, "promptkit-sandbox", "kube"), nil
}

// cacheKey names a build: the version, and a hash of everything that
// decides the binaries' content — the recipe, the go.mod template, the
// kubelet patch, the flags, the platform and the Go toolchain.
func cacheKey(ctx context.Context) (string, error) {
	goVersion, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("asking the go command for its version: %w", err)
	}
	h := sha256.New()
	for _, part := range []string{
		recipeVersion, Version, stagingVersion, goModFile([]string{"k8s.io/STAGING"}),
		patchID(), ldflags(), target(), strings.TrimSpace(string(goVersion)),
		strings.Join(Components, ","), strings.Join(buildEnv(), " "),
		kubeRouterGoMod(), kubeRouterPackage,
	} {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return Version + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// buildEnv is what the build adds to the environment: static binaries, the
// build module's own go.mod (updated as needed: it lists only the one
// requirement), and none of the caller's workspace or toolchain switches.
func buildEnv() []string {
	return []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local"}
}

// EnsureBinaries returns the built components, building them first when the
// cache does not have them. Only the first run on a machine builds (about
// 8 minutes on two cores, kube-apiserver alone 4.5); concurrent callers,
// in this process or others, wait for one build. The build happens in a
// temporary directory beside the cache entry and is renamed into place, so
// a reader never sees half a build.
func EnsureBinaries(ctx context.Context, log func(format string, args ...any)) (Binaries, error) {
	if log == nil {
		log = func(string, ...any) {}
	}
	root, err := CacheRoot()
	if err != nil {
		return Binaries{}, err
	}
	key, err := cacheKey(ctx)
	if err != nil {
		return Binaries{}, err
	}
	bins := Binaries{Dir: filepath.Join(root, key)}
	if complete(bins) {
		return bins, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil { // #nosec G301 -- the binary cache under the user's cache directory, as the go command makes its own
		return Binaries{}, fmt.Errorf("making the binary cache: %w", err)
	}
	unlock, err := flock.Lock(ctx, filepath.Join(root, key+".lock"))
	if err != nil {
		return Binaries{}, fmt.Errorf("locking the binary cache: %w", err)
	}
	defer unlock()
	if complete(bins) { // built by whoever held the lock
		return bins, nil
	}
	log("kubecluster: building Kubernetes %s into %s (first run only; several minutes)", Version, bins.Dir)
	if err := build(ctx, root, bins.Dir, log); err != nil {
		return Binaries{}, fmt.Errorf("building Kubernetes %s: %w", Version, err)
	}
	return bins, nil
}

// complete reports whether every component is in the cache directory. The
// directory only ever appears whole (see build), so this is a cheap check.
func complete(b Binaries) bool {
	for _, name := range binaries {
		if _, err := os.Stat(b.Path(name)); err != nil {
			return false
		}
	}
	return true
}

// build compiles every component into a temporary directory under root
// and renames it to dest.
func build(ctx context.Context, root, dest string, log logf) error {
	tmp, err := os.MkdirTemp(root, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	modDir, binDir := filepath.Join(tmp, "module"), filepath.Join(tmp, "bin")
	for _, d := range []string{modDir, binDir} {
		if err := os.Mkdir(d, 0o755); err != nil { // #nosec G301 -- a build directory in the binary cache; nothing secret
			return err
		}
	}
	info, err := writeModule(ctx, modDir, log)
	if err != nil {
		return err
	}
	if err := patchedModule(info.Dir, filepath.Join(modDir, patchedDir)); err != nil {
		return err
	}
	// One component at a time: each go build already uses every core,
	// and two at once only add memory pressure.
	for _, name := range Components {
		args := []string{"build", "-trimpath", "-ldflags", ldflags(), "-o", filepath.Join(binDir, name)}
		start := time.Now()
		if _, err := goCmd(ctx, modDir, log, append(args, "k8s.io/kubernetes/cmd/"+name)...); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		log("kubecluster: built %s in %s", name, time.Since(start).Round(time.Second))
	}
	if err := buildKubeRouter(ctx, tmp, binDir, log); err != nil {
		return err
	}
	if err := os.Rename(binDir, dest); err != nil {
		return fmt.Errorf("moving the build into the cache: %w", err)
	}
	return nil
}

// buildKubeRouter builds kube-router from a module of its own: it needs
// an older client-go than the Kubernetes module pins, which one module
// could not hold both of.
func buildKubeRouter(ctx context.Context, tmp, binDir string, log logf) error {
	dir := filepath.Join(tmp, "kube-router")
	if err := os.Mkdir(dir, 0o755); err != nil { // #nosec G301 -- kube-router's build module in the binary cache; nothing secret
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(kubeRouterGoMod()), 0o644); err != nil { // #nosec G306 -- a go.mod, nothing secret
		return err
	}
	start := time.Now()
	flags := "-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=" + kubeRouterVersion
	if _, err := goCmd(ctx, dir, log, "build", "-trimpath", "-ldflags", flags,
		"-o", filepath.Join(binDir, "kube-router"), kubeRouterPackage); err != nil {
		return fmt.Errorf("kube-router: %w", err)
	}
	log("kubecluster: built kube-router %s in %s", kubeRouterVersion, time.Since(start).Round(time.Second))
	return nil
}

// goCmd runs the go command in dir with buildEnv and returns its stdout.
// Its stderr is logged as it comes (go build is silent unless something
// is downloaded or wrong), and the end of it is in the error.
func goCmd(ctx context.Context, dir string, log logf, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), buildEnv()...)
	var stdout bytes.Buffer
	stderr := &tailWriter{log: log, max: 4096}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("go %s: %w\n%s", strings.Join(args[:1], " "), err, stderr.tail())
	}
	return stdout.Bytes(), nil
}

// tailWriter logs each line written to it and keeps the last max bytes.
type tailWriter struct {
	log     logf
	max     int
	partial []byte
	buf     []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if len(w.buf) > w.max {
		w.buf = w.buf[len(w.buf)-w.max:]
	}
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.log("%s", w.partial[:i])
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}

func (w *tailWriter) tail() string { return strings.TrimSpace(string(w.buf)) }

var _ io.Writer = (*tailWriter)(nil)
