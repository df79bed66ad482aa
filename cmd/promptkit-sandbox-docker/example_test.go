package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

// TestDockerExample runs examples/docker/demo.sh as the README tells a
// user to: with the example's own runtime.yaml, the hook image built from
// its Dockerfile, and the plugin found in a plugin directory. Every
// decision must be the expected one, and nothing may be left running.
func TestDockerExample(t *testing.T) {
	dockertest.Require(t)
	cli, pluginDir := buildCLIAndPlugin(t, t.TempDir(), "0.1.0")

	build := exec.Command("../../examples/docker/build-image.sh")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build-image.sh: %v\n%s", err, out)
	}
	demo := exec.Command("../../examples/docker/demo.sh", cli, pluginDir)
	var stderr strings.Builder
	demo.Stderr = &stderr
	out, err := demo.Output()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	allow := `exit 0 {"allow":true,"reason":"","enforced":false,"metadata":null}`
	want := []string{}
	for _, hook := range []string{"pii_fresh", "pii_sidecar"} {
		want = append(want,
			hook+" before_call provider_before_call_clean.json "+allow,
			hook+` before_call provider_before_call_ssn.json exit 1 {"allow":false,"reason":"US SSN found in message 0 (user)","enforced":false,"metadata":{"detector":"ssn","phase":"before_call"}}`,
			hook+" after_call provider_after_call.json "+allow,
			hook+` after_call provider_after_call_ssn.json exit 1 {"allow":false,"reason":"US SSN found in response","enforced":false,"metadata":{"detector":"ssn","phase":"after_call"}}`,
		)
	}
	var got []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "pii_") {
			got = append(got, strings.Join(strings.Fields(line), " "))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("decisions:\n%s\nwant:\n%s\nfull output:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
	for _, filter := range []string{"label=org.promptkit.example=1", "label=org.promptkit.sandbox.name=fresh"} {
		if ids := dockertest.Docker(t, "ps", "-aq", "--filter", filter); strings.TrimSpace(ids) != "" {
			t.Errorf("containers left (%s): %s", filter, ids)
		}
	}
}
