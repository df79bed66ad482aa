package arena_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pkconfig "github.com/AltairaLabs/PromptKit/pkg/config"
)

// TestKitMatchesTheSchema: the arena config and prompt config the tests
// run are valid against the JSON schemas PromptArena v1.5.9 ships, which
// promptarena validate and run check (TestMain turns that check off, as
// it fetches them from the web).
func TestKitMatchesTheSchema(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/AltairaLabs/promptarena").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	schemas := filepath.Join(strings.TrimSpace(string(out)), "schemas", "v1alpha1")
	dir := t.TempDir()
	k := kit{source: "promptkit-sandbox", sourceArgs: map[string]any{
		"config": "runtime.yaml", "sandbox": "code", "workspace": "{{scenario.workspace}}",
	}, scenarios: []session{{name: "s", variables: map[string]string{"workspace": dir}, assertions: []map[string]any{only("go.mod")}}}}
	k.write(t, dir)

	pkconfig.SchemaValidationDisabled.Store(false)
	defer pkconfig.SchemaValidationDisabled.Store(true)
	for file, typ := range map[string]pkconfig.ConfigType{
		"arena.yaml":         pkconfig.ConfigTypeArena,
		"prompts/coder.yaml": pkconfig.ConfigTypePromptConfig,
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		res, err := pkconfig.ValidateWithLocalSchema(data, typ, schemas)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !res.Valid {
			t.Errorf("%s is not valid against %s/%s.json: %v\n%s", file, schemas, typ, res.Errors, data)
		}
	}
}
