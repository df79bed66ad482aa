// Package plugintest builds what an end-to-end test of a backend plugin
// runs: the host CLI and the plugin binary, laid out as make build lays
// them out, so the host discovers the plugin the way a user's would.
package plugintest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildCLIAndPlugin builds the host CLI (cliPkg) into dir and the plugin
// in the current directory, named promptkit-sandbox-NAME_vVERSION, into
// dir/plugins.
func BuildCLIAndPlugin(t testing.TB, dir, cliPkg, name, version string) (cli, pluginDir string) {
	t.Helper()
	pluginDir = filepath.Join(dir, "plugins")
	if err := os.Mkdir(pluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cli = filepath.Join(dir, "promptkit-sandbox")
	GoBuild(t, cli, cliPkg, "")
	GoBuild(t, filepath.Join(pluginDir, "promptkit-sandbox-"+name+"_v"+version), ".", "-X main.version="+version)
	return cli, pluginDir
}

// GoBuild builds pkg statically into out.
func GoBuild(t testing.TB, out, pkg, ldflags string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, "-ldflags", ldflags, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}
