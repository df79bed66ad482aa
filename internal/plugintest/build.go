// Package plugintest is what an end-to-end test of a backend plugin
// needs: the host CLI and the plugin binary, laid out as make build lays
// them out, so the host discovers the plugin the way a user's would, and
// a check of hook decisions made through them.
package plugintest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// BuildCLIAndPlugin builds the host CLI (cliPkg) into dir and the plugin
// in the current directory, named promptkit-sandbox-NAME_vVERSION, into
// dir/plugins. Under go test -short it skips the test, as GoBuild does.
func BuildCLIAndPlugin(t testing.TB, dir, cliPkg, name, version string) (cli, pluginDir string) {
	t.Helper()
	pluginDir = filepath.Join(dir, "plugins")
	// #nosec G301 -- a plugin directory as make build makes bin/plugins; discovery refuses only one others may write
	if err := os.Mkdir(pluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cli = filepath.Join(dir, "promptkit-sandbox")
	GoBuild(t, cli, cliPkg, "")
	GoBuild(t, filepath.Join(pluginDir, "promptkit-sandbox-"+name+"_v"+version), ".", "-X main.version="+version)
	return cli, pluginDir
}

// GoBuild builds pkg statically into out. Under go test -short (make
// unit) it skips the test instead: linking a plugin or a command takes
// seconds of CPU each, and the end-to-end tests that need one run under
// make test.
func GoBuild(t testing.TB, out, pkg, ldflags string) {
	t.Helper()
	goBuildIn(t, "", out, pkg, ldflags)
}

// BuildPlugin builds the plugin cmd/promptkit-sandbox-NAME at version
// into dir, named as make build names it, and returns its path. It works
// from any module's tests (the PromptKit adapter's too): the build runs
// in this repository's root, found from this file's own path.
func BuildPlugin(t testing.TB, dir, name, version string) string {
	t.Helper()
	out := filepath.Join(dir, "promptkit-sandbox-"+name+"_v"+version)
	goBuildIn(t, repoRoot(t), out, "./cmd/promptkit-sandbox-"+name, "-X main.version="+version)
	return out
}

// BuildCLI builds the host CLI, promptkit-sandbox, into dir and returns
// its path; like BuildPlugin it works from any module's tests.
func BuildCLI(t testing.TB, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "promptkit-sandbox")
	goBuildIn(t, repoRoot(t), out, "./cmd/promptkit-sandbox", "")
	return out
}

// repoRoot is the root of the source tree this file is in.
func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("plugintest: cannot tell where the source tree is")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func goBuildIn(t testing.TB, workdir, out, pkg, ldflags string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipping in -short mode: builds %s with go build (make test runs it)", pkg)
	}
	// Stripped, as make build ships them: a plugin's own binary is the
	// resident it copies into containers and pods, 30% smaller so.
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "-ldflags", strings.TrimSpace("-s -w "+ldflags), pkg)
	cmd.Dir = workdir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// CheckVerdictHooks runs each of hooks — /hooks/verdict (the test hook
// image's) configured as a provider before_call filter in the
// RuntimeConfig cfg — through `promptkit-sandbox hook run`, with an
// allowed and a denied request, and checks the decisions exactly. env
// adds to the CLI's environment.
func CheckVerdictHooks(t testing.TB, cli, pluginDir, cfg string, env []string, hooks ...string) {
	t.Helper()
	request := func(content string) string {
		return `{"request":{"ProviderID":"openai","Model":"gpt-4o","Messages":[{"role":"user","timestamp":"2026-04-15T12:00:00Z","content":"` +
			content + `"}],"SystemPrompt":"","Round":1,"Metadata":null,"Replacement":""}}`
	}
	for _, hook := range hooks {
		for _, tc := range []struct {
			content string
			code    int
			out     string
		}{
			{"hello", 0, `{"allow":true,"reason":"","enforced":false,"metadata":null}`},
			{"please deny-me", 1, `{"allow":false,"reason":"request contains deny-me","enforced":false,"metadata":null}`},
		} {
			cmd := exec.Command(cli, "hook", "run", "--plugin-dir", pluginDir, "--config", cfg, "--hook", hook, "--phase", "before_call")
			cmd.Env = append(os.Environ(), env...)
			cmd.Stdin = strings.NewReader(request(tc.content))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || strings.TrimSpace(stdout.String()) != tc.out {
				t.Errorf("%s %q: exit %d (want %d)\n got %s\nwant %s\nstderr: %s", hook, tc.content, code, tc.code, stdout.String(), tc.out, stderr.String())
			}
		}
	}
}
