// Package sandboxdimage builds the sandboxd container images without a
// registry, one per language set: promptkit/sandboxd:VERSION serves Go,
// promptkit/sandboxd-python:VERSION Python, and so on
// (codegenimage.ImageFor). Each image stacks
//
//   - the base: a minimal Debian root filesystem that mmdebstrap makes
//     and docker import loads (bash, git, ripgrep, universal-ctags,
//     graphviz), shared by every image;
//   - one layer per language: for Go the host's toolchain, staticcheck
//     and gopls with the standard library compiled (a docker build); for
//     the others Debian's packages, installed by dpkg in a container and
//     committed (debs.go);
//   - sandboxd built from this tree, its git configuration and its user.
//
// Every layer is labelled with a hash of its inputs, its parent's
// included, so Ensure skips whatever is up to date: `make
// sandboxd-image`, its tests and a provider's tests share one build.
package sandboxdimage

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/internal/flock"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
)

// baseRepository holds the imported Debian root filesystems, tagged by
// baseKey; baseLabel marks them.
const (
	baseRepository = "promptkit/sandboxd-base"
	baseLabel      = "org.promptkit.sandboxd.base"
)

// layerRepository holds the language layers, tagged LANGUAGE-KEY; the
// label holds the whole key.
const (
	layerRepository = "promptkit/sandboxd-layer"
	layerLabel      = "org.promptkit.sandboxd.layer"
)

// Options say what to build; the zero value builds the default version
// from the repository the working directory is in.
type Options struct {
	Version string // the image's tag and sandboxd's version; "" for codegenimage.Version
	// Languages the image serves (codegenimage.Languages); empty for
	// codegenimage.DefaultLanguage.
	Languages []string
	ModuleDir string    // this repository's root; "" finds it from the working directory
	CacheDir  string    // where built binaries are kept; "" for the user's cache directory
	Log       io.Writer // progress lines; nil for none
}

// Result is the image Ensure made sure of.
type Result struct {
	Ref    string // e.g. promptkit/sandboxd:0.1.0
	Inputs string // the hash of its inputs, also its InputsLabel
	Built  bool   // false when the engine already had it
	// Languages it serves, in the order of codegenimage.Languages.
	Languages []string
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

	p, err := o.plan(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{Ref: codegenimage.ImageFor(o.Version, o.Languages...), Inputs: p.top.key(), Languages: o.Languages}
	have, err := imageLabel(ctx, res.Ref, codegenimage.InputsLabel)
	if err != nil {
		return Result{}, err
	}
	if have == res.Inputs {
		o.logf("%s is up to date (inputs %s)", res.Ref, res.Inputs[:12])
		return res, nil
	}
	parent := baseRepository + ":" + p.base[:12]
	if err := ensureBase(ctx, o, parent); err != nil {
		return Result{}, err
	}
	var chain []string
	for _, l := range p.layers {
		chain = append(chain, l.language)
		prefix := layerRepository + ":" + strings.Join(chain, "-") + "-"
		ref := prefix + l.key[:12]
		have, err := imageLabel(ctx, ref, layerLabel)
		if err != nil {
			return Result{}, err
		}
		if have != l.key {
			if err := l.build(ctx, o, parent, ref); err != nil {
				return Result{}, err
			}
			untagOthers(ctx, prefix, ref)
		}
		parent = ref
	}
	if err := buildTop(ctx, o, p.top, parent, res); err != nil {
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
	if len(o.Languages) == 0 {
		o.Languages = []string{codegenimage.DefaultLanguage}
	}
	langs, err := codegenimage.ParseLanguages(strings.Join(o.Languages, ","))
	if err != nil {
		return fmt.Errorf("languages: %w", err)
	}
	o.Languages = langs
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
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil { // #nosec G301 -- the image build cache under the user's cache directory; nothing secret
		return fmt.Errorf("making the cache directory: %w", err)
	}
	return nil
}

func (o *Options) logf(format string, args ...any) {
	fmt.Fprintf(o.Log, "sandboxd-image: "+format+"\n", args...)
}

// buildArgs are the last layer's docker build --build-arg values besides
// its parent's reference, which its key covers.
func buildArgs() []string {
	return []string{
		"UID=" + strconv.Itoa(codegenimage.UID),
		"GID=" + strconv.Itoa(codegenimage.GID),
		"USERNAME=" + codegenimage.UserName,
	}
}

func fileHash(path string) ([]byte, error) {
	f, err := os.Open(path) // #nosec G304 -- hashes a build input this package names (the sandboxd binary, staticcheck)
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

// untagOthers removes the tags of the layers the one just built
// replaces (the same languages on the same chain, other inputs), so
// that they do not pile up; an image still in use stays (best effort).
func untagOthers(ctx context.Context, prefix, keep string) {
	out, err := docker(ctx, "image", "ls", "--format", "{{.Repository}}:{{.Tag}}", layerRepository)
	if err != nil {
		return
	}
	for _, ref := range strings.Fields(out) {
		if strings.HasPrefix(ref, prefix) && ref != keep {
			_, _ = docker(ctx, "image", "rm", ref)
		}
	}
}

// docker runs the docker CLI and returns its stdout; the error carries
// the command and docker's stderr.
func docker(ctx context.Context, args ...string) (string, error) {
	return output(ctx, "docker", args...)
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
