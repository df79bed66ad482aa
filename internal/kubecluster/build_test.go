package kubecluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPatchSourceMatchesExactlyOnce(t *testing.T) {
	p := kernelTunablesPatch
	src := "func f() {\n" + p.old + "}\n"
	got, err := patchSource(src, p.old, p.new)
	if err != nil || got != "func f() {\n"+p.new+"}\n" {
		t.Errorf("patchSource = %q, %v", got, err)
	}
	for _, bad := range []string{"func f() {}\n", src + src} {
		if _, err := patchSource(bad, p.old, p.new); err == nil {
			t.Errorf("patchSource(%q) succeeded; want an error: the patch must match exactly once", bad)
		}
	}
}

func TestStagingModulesReadsTheReplaceBlock(t *testing.T) {
	goMod := filepath.Join(t.TempDir(), "go.mod")
	content := "module k8s.io/kubernetes\n\nrequire k8s.io/api v0.0.0\n\nreplace (\n" +
		"\tk8s.io/api => ./staging/src/k8s.io/api\n" +
		"\tk8s.io/client-go => ./staging/src/k8s.io/client-go\n" +
		"\tgithub.com/x/y => github.com/x/y v1.0.0\n)\n" +
		"replace k8s.io/kubelet => ./staging/src/k8s.io/kubelet\n"
	if err := os.WriteFile(goMod, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := stagingModules(goMod)
	if want := "k8s.io/api k8s.io/client-go k8s.io/kubelet"; err != nil || strings.Join(got, " ") != want {
		t.Errorf("stagingModules = %v, %v; want %s", got, err, want)
	}
	mod := goModFile(got)
	for _, want := range []string{"require k8s.io/kubernetes " + Version, "k8s.io/api => k8s.io/api " + stagingVersion,
		"replace k8s.io/kubernetes => ./" + patchedDir} {
		if !strings.Contains(mod, want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}
}

// TestPatchAppliesToPinnedVersion checks the kubelet patch against the
// pinned release itself, with the hard-linked copy the build uses, and
// that the module cache's file is left as it was.
func TestPatchAppliesToPinnedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short mode: downloads k8s.io/kubernetes (make test runs it)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	info, err := writeModule(ctx, dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	orig := filepath.Join(info.Dir, filepath.FromSlash(kernelTunablesPatch.file))
	before, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(dir, patchedDir)
	if err := patchedModule(info.Dir, copyDir); err != nil {
		t.Fatal(err)
	}
	patched, err := os.ReadFile(filepath.Join(copyDir, filepath.FromSlash(kernelTunablesPatch.file)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(patched), kernelTunablesPatch.new) || strings.Contains(string(patched), kernelTunablesPatch.old) {
		t.Error("the copy is not patched")
	}
	after, err := os.ReadFile(orig)
	if err != nil || string(after) != string(before) {
		t.Errorf("the module cache's %s changed (%v)", orig, err)
	}
}
