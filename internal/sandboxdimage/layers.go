package sandboxdimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
)

// plan is what one image is made of: the base, a layer per language, and
// the top, each keyed by its inputs and its parent's key.
type plan struct {
	base   string // baseKey
	layers []layerStep
	top    topInputs
}

// layerStep is one language's layer: its key, and how to build it on a
// parent image.
type layerStep struct {
	language string
	key      string
	build    func(ctx context.Context, o Options, parentRef, ref string) error
}

// plan builds the binaries (a no-op when they are up to date) and keys
// every layer of the image o asks for.
func (o *Options) plan(ctx context.Context) (plan, error) {
	p := plan{base: baseKey(debian, aptState(debian))}
	parent := p.base
	for _, lang := range o.Languages {
		var step layerStep
		var err error
		if lang == codegenimage.Go {
			step, err = o.goLayer(ctx, parent)
		} else {
			in := debLayerInputs{parent: parent, language: lang, packages: languagePackages[lang], script: installScript}
			step = layerStep{language: lang, key: in.key(), build: func(ctx context.Context, o Options, parentRef, ref string) error {
				return buildDebLayer(ctx, o, in, parentRef, ref)
			}}
		}
		if err != nil {
			return plan{}, err
		}
		p.layers = append(p.layers, step)
		parent = step.key
	}
	sandboxd, helper, err := buildSandboxd(ctx, o.ModuleDir, o.CacheDir, o.Version)
	if err != nil {
		return plan{}, err
	}
	p.top = topInputs{
		parent:      parent,
		languages:   o.Languages,
		dockerfile:  dockerfile,
		gitconfig:   gitconfig,
		buildArgs:   buildArgs(),
		sandboxdBin: sandboxd,
		helperBin:   helper,
	}
	if p.top.sandboxd, err = fileHash(sandboxd); err != nil {
		return plan{}, err
	}
	if p.top.helper, err = fileHash(helper); err != nil {
		return plan{}, err
	}
	return p, nil
}

// goLayer keys the Go layer on parent, installing staticcheck and gopls
// for the host's toolchain first.
func (o *Options) goLayer(ctx context.Context, parent string) (layerStep, error) {
	tc, err := findToolchain(ctx)
	if err != nil {
		return layerStep{}, err
	}
	staticcheck, err := staticcheckTool.install(ctx, o.CacheDir, tc)
	if err != nil {
		return layerStep{}, err
	}
	gopls, err := goplsTool.install(ctx, o.CacheDir, tc)
	if err != nil {
		return layerStep{}, err
	}
	in := goLayerInputs{
		parent:      parent,
		dockerfile:  goDockerfile,
		goToolchain: tc.id(),
		goroot:      tc.goroot,
		staticBin:   staticcheck,
		goplsBin:    gopls,
	}
	if in.staticcheck, err = fileHash(staticcheck); err != nil {
		return layerStep{}, err
	}
	if in.gopls, err = fileHash(gopls); err != nil {
		return layerStep{}, err
	}
	return layerStep{language: codegenimage.Go, key: in.key(), build: func(ctx context.Context, o Options, parentRef, ref string) error {
		return dockerBuild(ctx, o, ref, parentRef, nil, []string{layerLabel + "=" + in.key()}, in.writeContext)
	}}, nil
}

// writeContext writes the Go layer's Dockerfile and what it copies into
// dir.
func (in goLayerInputs) writeContext(dir string) error {
	// #nosec G306 -- a Docker build context's Dockerfile, nothing secret
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(in.dockerfile), 0o644); err != nil {
		return err
	}
	for name, src := range map[string]string{"staticcheck": in.staticBin, "gopls": in.goplsBin} {
		if err := linkOrCopy(src, filepath.Join(dir, name), 0o755); err != nil {
			return err
		}
	}
	return copyGoroot(in.goroot, filepath.Join(dir, "go"))
}

// writeContext writes the last layer's Dockerfile and what it copies
// into dir.
func (in topInputs) writeContext(dir string) error {
	files := map[string]string{"Dockerfile": in.dockerfile, "gitconfig": in.gitconfig}
	for name, content := range files {
		// #nosec G306 -- a Docker build context, whose modes become the image's
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	if err := linkOrCopy(in.sandboxdBin, filepath.Join(dir, "sandboxd"), 0o755); err != nil {
		return err
	}
	return linkOrCopy(in.helperBin, filepath.Join(dir, "sandboxd-diagram"), 0o755)
}

// buildTop builds res.Ref: the last layer, on parentRef.
func buildTop(ctx context.Context, o Options, in topInputs, parentRef string, res Result) error {
	labels := []string{
		codegenimage.InputsLabel + "=" + res.Inputs,
		codegenimage.LanguagesLabel + "=" + strings.Join(in.languages, ","),
	}
	if err := dockerBuild(ctx, o, res.Ref, parentRef, buildArgs(), labels, in.writeContext); err != nil {
		return err
	}
	// The image the tag pointed at before is dangling now; tidying up is
	// best effort, and an image a container still uses stays.
	_, _ = docker(ctx, "image", "prune", "--force", "--filter", "label="+codegenimage.InputsLabel)
	return nil
}

// dockerBuild builds ref FROM parentRef with the context write makes.
func dockerBuild(ctx context.Context, o Options, ref, parentRef string, buildArgs, labels []string, write func(dir string) error) error {
	dir, err := os.MkdirTemp("", "sandboxd-image-")
	if err != nil {
		return fmt.Errorf("making the build context: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := write(dir); err != nil {
		return fmt.Errorf("assembling the build context of %s: %w", ref, err)
	}
	o.logf("building %s FROM %s", ref, parentRef)
	start := time.Now()
	args := []string{"build", "--force-rm", "--network", "none", "--tag", ref, "--build-arg", "PARENT=" + parentRef}
	for _, l := range labels {
		args = append(args, "--label", l)
	}
	for _, a := range buildArgs {
		args = append(args, "--build-arg", a)
	}
	if _, err := docker(ctx, append(args, dir)...); err != nil {
		return fmt.Errorf("building %s: %w", ref, err)
	}
	o.logf("%s built in %s", ref, time.Since(start).Round(time.Second))
	return nil
}
