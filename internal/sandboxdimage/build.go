// Package sandboxdimage builds the sandboxd container image,
// promptkit/sandboxd:VERSION, without a registry: mmdebstrap makes a
// minimal Debian root filesystem from Debian's packages, docker import
// loads it as the base, and a docker build FROM that base adds the host's
// Go toolchain, staticcheck and sandboxd built from this tree.
//
// The image is labelled with a hash of its inputs (codegenimage.InputsLabel)
// and the base is tagged with one, so Ensure skips whatever is up to date:
// `make sandboxd-image`, its tests and a provider's tests share one build.
package sandboxdimage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/flock"

	"github.com/altairalabs/promptkit-sandbox/shared/codegenimage"
)

// baseRepository holds the imported Debian root filesystems, tagged by
// baseKey; baseLabel marks them.
const (
	baseRepository = "promptkit/sandboxd-base"
	baseLabel      = "org.promptkit.sandboxd.base"
)

// Options say what to build; the zero value builds the default version
// from the repository the working directory is in.
type Options struct {
	Version   string    // the image's tag and sandboxd's version; "" for codegenimage.Version
	ModuleDir string    // this repository's root; "" finds it from the working directory
	CacheDir  string    // where built binaries are kept; "" for the user's cache directory
	Log       io.Writer // progress lines; nil for none
}

// Result is the image Ensure made sure of.
type Result struct {
	Ref    string // e.g. promptkit/sandboxd:0.1.0
	Inputs string // the hash of its inputs, also its InputsLabel
	Built  bool   // false when the engine already had it
}

// Ensure builds the image unless the engine has one built from the same
// inputs, and returns its reference. Concurrent callers on one machine
// (make and a test binary, say) take turns, so the second finds the
// first's image.
func Ensure(ctx context.Context, o Options) (Result, error) {
	if err := o.fill(ctx); err != nil {
		return Result{}, err
	}
	unlock, err := flock.Lock(ctx, filepath.Join(o.CacheDir, "lock"))
	if err != nil {
		return Result{}, err
	}
	defer unlock()

	in, err := o.inputs(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{Ref: codegenimage.Image(o.Version), Inputs: in.key()}
	have, err := imageLabel(ctx, res.Ref, codegenimage.InputsLabel)
	if err != nil {
		return Result{}, err
	}
	if have == res.Inputs {
		o.logf("%s is up to date (inputs %s)", res.Ref, res.Inputs[:12])
		return res, nil
	}
	baseRef := baseRepository + ":" + in.base[:12]
	if err := ensureBase(ctx, o, baseRef); err != nil {
		return Result{}, err
	}
	if err := buildImage(ctx, o, in, baseRef, res); err != nil {
		return Result{}, err
	}
	res.Built = true
	return res, nil
}

// fill defaults the options.
func (o *Options) fill(ctx context.Context) error {
	if o.Version == "" {
		o.Version = codegenimage.Version
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.ModuleDir == "" {
		gomod, err := goCommand(ctx, "", nil, "env", "GOMOD")
		if err != nil {
			return fmt.Errorf("finding the repository: %w", err)
		}
		gomod = strings.TrimSpace(gomod)
		if gomod == "" || gomod == os.DevNull {
			return errors.New("finding the repository: the working directory is not in a Go module; run from the promptkit-sandbox repository")
		}
		o.ModuleDir = filepath.Dir(gomod)
	}
	if o.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		o.CacheDir = filepath.Join(dir, "promptkit-sandbox", "sandboxd-image")
	}
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return fmt.Errorf("making the cache directory: %w", err)
	}
	return nil
}

func (o *Options) logf(format string, args ...any) {
	fmt.Fprintf(o.Log, "sandboxd-image: "+format+"\n", args...)
}

// inputs builds the binaries (a no-op when they are up to date) and
// gathers everything the image's hash covers.
func (o *Options) inputs(ctx context.Context) (imageInputs, error) {
	tc, err := findToolchain(ctx)
	if err != nil {
		return imageInputs{}, err
	}
	sandboxd, err := buildSandboxd(ctx, o.ModuleDir, o.CacheDir, o.Version)
	if err != nil {
		return imageInputs{}, err
	}
	staticcheck, err := staticcheckTool.install(ctx, o.CacheDir, tc)
	if err != nil {
		return imageInputs{}, err
	}
	gopls, err := goplsTool.install(ctx, o.CacheDir, tc)
	if err != nil {
		return imageInputs{}, err
	}
	in := imageInputs{
		base:        baseKey(debian, aptState(debian)),
		dockerfile:  dockerfile,
		gitconfig:   gitconfig,
		buildArgs:   buildArgs(""),
		goToolchain: tc.id(),
		goroot:      tc.goroot,
		sandboxdBin: sandboxd,
		staticBin:   staticcheck,
		goplsBin:    gopls,
	}
	if in.sandboxd, err = fileHash(sandboxd); err != nil {
		return imageInputs{}, err
	}
	if in.staticcheck, err = fileHash(staticcheck); err != nil {
		return imageInputs{}, err
	}
	if in.gopls, err = fileHash(gopls); err != nil {
		return imageInputs{}, err
	}
	return in, nil
}

// buildArgs are the docker build --build-arg values; the base's reference
// is left out of the hash (baseKey covers it).
func buildArgs(baseRef string) []string {
	args := []string{
		"UID=" + strconv.Itoa(codegenimage.UID),
		"GID=" + strconv.Itoa(codegenimage.GID),
		"USERNAME=" + codegenimage.UserName,
	}
	if baseRef != "" {
		args = append(args, "BASE="+baseRef)
	}
	return args
}

func fileHash(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hashing %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("hashing %s: %w", path, err)
	}
	return h.Sum(nil), nil
}

// buildImage assembles the build context and builds res.Ref FROM baseRef.
func buildImage(ctx context.Context, o Options, in imageInputs, baseRef string, res Result) error {
	dir, err := os.MkdirTemp("", "sandboxd-image-")
	if err != nil {
		return fmt.Errorf("making the build context: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := in.writeContext(dir); err != nil {
		return fmt.Errorf("assembling the build context: %w", err)
	}
	o.logf("building %s FROM %s", res.Ref, baseRef)
	start := time.Now()
	args := []string{"build", "--force-rm", "--network", "none",
		"--label", codegenimage.InputsLabel + "=" + res.Inputs, "--tag", res.Ref}
	for _, a := range buildArgs(baseRef) {
		args = append(args, "--build-arg", a)
	}
	if _, err := docker(ctx, append(args, dir)...); err != nil {
		return fmt.Errorf("building %s: %w", res.Ref, err)
	}
	o.logf("%s built in %s (inputs %s)", res.Ref, time.Since(start).Round(time.Second), res.Inputs[:12])
	// The image the tag pointed at before is dangling now; tidying up is
	// best effort, and an image a container still uses stays.
	_, _ = docker(ctx, "image", "prune", "--force", "--filter", "label="+codegenimage.InputsLabel)
	return nil
}

// writeContext writes the Dockerfile and everything it copies into dir.
func (in imageInputs) writeContext(dir string) error {
	files := map[string]string{"Dockerfile": in.dockerfile, "gitconfig": in.gitconfig}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	for name, src := range map[string]string{"sandboxd": in.sandboxdBin, "staticcheck": in.staticBin, "gopls": in.goplsBin} {
		if err := linkOrCopy(src, filepath.Join(dir, name), 0o755); err != nil {
			return err
		}
	}
	return copyGoroot(in.goroot, filepath.Join(dir, "go"))
}

// docker runs the docker CLI and returns its stdout; the error carries
// the command and docker's stderr.
func docker(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, tail(stderr.String()))
	}
	return stdout.String(), nil
}

// imageLabel returns the image's label key, "" when the image or the
// label is missing.
func imageLabel(ctx context.Context, ref, key string) (string, error) {
	out, err := docker(ctx, "image", "ls", "--quiet", ref)
	if err != nil || strings.TrimSpace(out) == "" {
		return "", err
	}
	out, err = docker(ctx, "image", "inspect", "--format", `{{index .Config.Labels "`+key+`"}}`, ref)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}
