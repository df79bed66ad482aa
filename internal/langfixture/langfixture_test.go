package langfixture

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
)

// TestEveryLanguageHasAFixture: each language's project is there, is
// detected as that language alone, and holds what its expectations name.
func TestEveryLanguageHasAFixture(t *testing.T) {
	for _, lang := range codegenimage.Languages {
		fx, ok := Get(lang)
		if !ok {
			t.Errorf("no fixture for %s", lang)
			continue
		}
		dir := t.TempDir()
		if err := fx.WriteTo(dir, os.Getuid(), os.Getgid()); err != nil {
			t.Fatal(err)
		}
		d, err := codegenimage.Detect(dir)
		if err != nil || !slices.Equal(d.Languages, []string{lang}) {
			t.Errorf("%s fixture detected as %v, %v", lang, d.Languages, err)
		}
		files, err := fx.Files()
		if err != nil {
			t.Fatal(err)
		}
		for file, want := range map[string]string{fx.DefFile: fx.Symbol, fx.UseFile: fx.Symbol, fx.Break.File: fx.Break.Old} {
			if !strings.Contains(string(files[file]), want) {
				t.Errorf("%s fixture: %s lacks %q", lang, file, want)
			}
		}
		def := strings.Split(string(files[fx.DefFile]), "\n")
		if fx.DefLine < 1 || fx.DefLine > len(def) || !strings.Contains(def[fx.DefLine-1], fx.Symbol) {
			t.Errorf("%s fixture: %s:%d does not define %s", lang, fx.DefFile, fx.DefLine, fx.Symbol)
		}
	}
}
