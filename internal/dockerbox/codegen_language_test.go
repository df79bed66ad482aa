package dockerbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/langfixture"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// TestCodegenLanguageKeys: image and language exclude each other, and a
// language must be one the images serve; both are refused before the
// engine is asked anything.
func TestCodegenLanguageKeys(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent.sock")
	p := NewCodegenProvider(DefaultHardening, nil)
	defer p.Close()
	for cfg, want := range map[string]map[string]any{
		`keys "image" and "language" exclude each other`:              {"image": "x", "language": "go"},
		`config: key "language": unknown language "cobol" (known: go`: {"language": "go,cobol"},
		`config: key "image": must not be blank`:                      {"image": "  "},
	} {
		if err := p.Check("e", want); err == nil || !strings.Contains(err.Error(), cfg) {
			t.Errorf("Check(%v) = %v, want %q", want, err, cfg)
		}
	}
	if err := p.Check("e", map[string]any{"language": "Python, go"}); err != nil {
		t.Errorf("Check(language: Python, go) = %v", err)
	}
}

// TestCodegenImageChoiceMissing: a workspace whose languages no local
// image serves together, or a language key whose image is missing, fails
// the provision at once, saying what the workspace holds, what the
// engine has and what to build; nothing is started.
func TestCodegenImageChoiceMissing(t *testing.T) {
	dockertest.Require(t)
	p, root := newTestProvider(t)
	ws := ownedWorkspace(t, 1234, 1234)
	for _, f := range []string{"pyproject.toml", "crates/core/Cargo.toml"} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// crates/core is two levels down: only python counts, and a python
	// image may exist; a rust marker at the top makes the pair.
	if err := os.WriteFile(filepath.Join(ws, "Cargo.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err := p.Provision(ctx, plugin.ProvisionSpec{Name: "e", Mode: CodegenMode, Config: map[string]any{"workspace": ws}})
	want := "the workspace holds python (pyproject.toml), rust (Cargo.toml), and no local sandboxd image serves all of them (wanted promptkit/sandboxd-python-rust:0.1.0"
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "make sandboxd-image LANGUAGES=python,rust") || !strings.Contains(err.Error(), "set the sandbox's language (or image) key") {
		t.Errorf("two languages, no image for both:\n%v\nwant it to contain %q and how to build one", err, want)
	}
	_, err = p.Provision(ctx, plugin.ProvisionSpec{Name: "e", Mode: CodegenMode, Config: map[string]any{"language": "node,rust", "workspace": ws}})
	if !errors.Is(err, sandbox.ErrStart) || !strings.Contains(err.Error(), "no local sandboxd image serves node and rust (wanted promptkit/sandboxd-node-rust:0.1.0") {
		t.Errorf("language key, no image: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("failed provisions left directories: %v", entries)
	}
}

// TestCodegenLanguages: for every language, a workspace holding that
// language's fixture project provisioned with neither image nor language
// key lands in the language's image (saying it detected it), and every
// tool of the language works in the container over MCP: run_tests counts
// the passing and the failing test, run_lint and run_typecheck report
// the fixture's findings, an Edit that breaks the code comes back with
// its diagnostics, search_code finds the symbol, snapshots restore, and
// where the image has a language server, find_definition,
// find_references and rename_symbol answer and apply.
func TestCodegenLanguages(t *testing.T) {
	for _, lang := range codegenimage.Languages {
		t.Run(lang, func(t *testing.T) {
			image := realImage(t, lang)
			fx, _ := langfixture.Get(lang)
			ws := ownedWorkspace(t, 1234, 1234)
			if err := fx.WriteTo(ws, 1234, 1234); err != nil {
				t.Fatal(err)
			}
			p, _ := newTestProvider(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			got, err := p.Provision(ctx, plugin.ProvisionSpec{Name: uniqueName(t), Mode: CodegenMode, Config: map[string]any{"workspace": ws}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Release(context.Background(), got.ID, plugin.ReleaseOptions{})
			if got.Details["image"] != image || got.Details["image_by"] != "detected" || got.Details["languages"] != lang ||
				!strings.HasPrefix(got.Details["detected"], lang+" (") {
				t.Errorf("details image %q, image_by %q, languages %q, detected %q; want %s, detected, %s",
					got.Details["image"], got.Details["image_by"], got.Details["languages"], got.Details["detected"], image, lang)
			}
			cs := mcptest.Connect(t, got.Endpoint, got.Token)
			fx.CheckTools(t, cs)
		})
	}
}

// TestCodegenImageChoice: every marker file picks its language's image,
// whether at the workspace's root or in a top-level directory; a
// workspace with none, or none the provider can see (deeper, or in a
// hidden directory), gets the default image and says why; the language
// key and the image key decide without looking.
func TestCodegenImageChoice(t *testing.T) {
	images := map[string]string{}
	for _, lang := range codegenimage.Languages {
		images[lang] = realImage(t, lang)
	}
	cli, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	choose := func(t *testing.T, set codegenSettings, files ...string) imageChoice {
		t.Helper()
		ws := t.TempDir()
		for _, f := range files {
			p := filepath.Join(ws, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c, err := chooseImage(ctx, cli, set, ws)
		if err != nil {
			t.Fatalf("%v: %v", files, err)
		}
		return c
	}
	for _, lang := range codegenimage.Languages {
		for _, marker := range codegenimage.Markers(lang) {
			for _, at := range []string{marker, "app/" + marker} {
				c := choose(t, codegenSettings{}, at)
				if c.ref != images[lang] || c.by != imageByDetected || c.detected != lang+" ("+at+")" {
					t.Errorf("a workspace with %s: image %s by %s (%s); want %s by detected", at, c.ref, c.by, c.detected, images[lang])
				}
			}
		}
	}
	for _, files := range [][]string{nil, {"a/b/go.mod"}, {".git/Cargo.toml"}, {"README.md"}} {
		c := choose(t, codegenSettings{}, files...)
		if c.ref != images[codegenimage.Go] || c.by != imageByDefault || c.detected != "no language marker" {
			t.Errorf("a workspace with %v: image %s by %s (%s); want the default, saying no language marker", files, c.ref, c.by, c.detected)
		}
		if d := c.details(); d["image_by"] != "default" || d["languages"] != "go" {
			t.Errorf("details %v", d)
		}
	}
	if c := choose(t, codegenSettings{languages: []string{"rust"}}, "go.mod"); c.ref != images[codegenimage.Rust] || c.by != imageByLanguage || c.detected != "" {
		t.Errorf("language key rust on a Go workspace: %+v", c)
	}
	if c := choose(t, codegenSettings{image: images[codegenimage.Node]}, "go.mod"); c.ref != images[codegenimage.Node] || c.by != imageByConfig ||
		len(c.languages) != 1 || c.languages[0] != "node" {
		t.Errorf("image key on a Go workspace: %+v", c)
	}
}

// TestCodegenImageServingSeveral: once an image labelled with a
// workspace's languages exists, a workspace holding them all gets it;
// among several that serve them, the one serving the fewest languages.
// The images here are labels alone (FROM scratch): choosing reads
// labels, not contents.
func TestCodegenImageServingSeveral(t *testing.T) {
	dockertest.Require(t)
	cli, err := newClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	repo := "promptkit-test/sandboxd-choice-" + strings.ToLower(uniqueName(t))
	labelled := func(tag, langs string) string {
		dir := t.TempDir()
		df := "FROM scratch\nLABEL " + codegenimage.LanguagesLabel + "=" + langs + "\n"
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
			t.Fatal(err)
		}
		ref := repo + ":" + tag
		docker(t, "build", "--network", "none", "--tag", ref, dir)
		t.Cleanup(func() { docker(t, "image", "rm", "--force", ref) })
		return ref
	}
	ws := t.TempDir()
	for _, f := range []string{"pyproject.toml", "Cargo.toml"} {
		if err := os.WriteFile(filepath.Join(ws, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wide := labelled("wide", "go,python,node,rust")
	c, err := chooseImage(context.Background(), cli, codegenSettings{}, ws)
	if err != nil || c.ref != wide || c.by != imageByDetected || strings.Join(c.languages, ",") != "go,python,node,rust" {
		t.Fatalf("python and rust with one image serving all four: %+v, %v", c, err)
	}
	narrow := labelled("narrow", "python,rust")
	if c, err := chooseImage(context.Background(), cli, codegenSettings{}, ws); err != nil || c.ref != narrow {
		t.Errorf("python and rust with a python,rust image too: %+v, %v; want %s", c, err, narrow)
	}
}
