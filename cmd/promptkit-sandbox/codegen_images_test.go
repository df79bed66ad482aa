package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

// TestCodegenImagesLists: codegen images lists, from the real engine, an
// image carrying the languages label with its languages, in text and in
// JSON, and leaves out the images without the label.
func TestCodegenImagesLists(t *testing.T) {
	dockertest.RequireCLI(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	repo := "promptkit-test/codegen-images-" + hex.EncodeToString(b[:])
	dir := t.TempDir()
	df := "FROM scratch\nLABEL " + codegenimage.LanguagesLabel + "=go,rust\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := repo + ":1"
	dockertest.Docker(t, "build", "--network", "none", "--tag", ref, dir)
	t.Cleanup(func() { dockertest.Docker(t, "image", "rm", "--force", ref) })

	code, out, stderr := cli(t, "", "codegen", "images", "--json")
	if code != 0 {
		t.Fatalf("codegen images --json: exit %d, %s", code, stderr)
	}
	var list []localImage
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("codegen images --json printed %q: %v", out, err)
	}
	i := slices.IndexFunc(list, func(im localImage) bool { return im.Ref == ref })
	if i < 0 || !slices.Equal(list[i].Languages, []string{"go", "rust"}) || list[i].ID == "" {
		t.Errorf("codegen images --json: %s not listed with go, rust: %+v", ref, list)
	}
	for _, im := range list {
		if strings.HasPrefix(im.Ref, "promptkit-test/busybox") {
			t.Errorf("an image without the label is listed: %+v", im)
		}
	}
	code, out, _ = cli(t, "", "codegen", "images")
	if code != 0 || !strings.Contains(out, "IMAGE") || !regexp.MustCompile(regexp.QuoteMeta(ref)+` +go,rust `).MatchString(out) {
		t.Errorf("codegen images: exit %d:\n%s", code, out)
	}
}
