package arena_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/dockerbox"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

// TestArenaSessionsOnDocker runs the four sessions through arena's
// engine, two at a time, each in a docker_codegen sandbox of its own
// (scope: session) on a workspace of its own, named by a scenario
// variable: run_tests gates the good sessions green and the bad ones red
// for their failing test; each workspace holds exactly what its session
// wrote; and once the run is over, before the source is closed, no
// container and no cache volume of the sandboxes is left: each session
// released its own.
func TestArenaSessionsOnDocker(t *testing.T) {
	dockertest.Require(t)
	img := sandboxdImage(t)
	plugins := pluginDir(t, "docker")
	dir := t.TempDir()
	name := "arena_" + randomHex(t)
	label := dockerbox.LabelName + "=" + name
	dockertest.Cleanup(t, label)
	cfg := writeRuntimeConfig(t, dir, name, fmt.Sprintf(
		"      mode: docker_codegen\n      image: %s\n      network: none\n      memory: 1g\n      cache: sandbox\n", img.Ref))
	workspaces := map[string]string{}
	for _, s := range e2eSessions {
		ws := filepath.Join(dir, "ws", s.name)
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		// A workspace root owns is served as the image's user, who could
		// not write it.
		if err := os.Chown(ws, codegenimage.UID, codegenimage.GID); err != nil {
			t.Skipf("cannot give the workspace to the image's user: %v", err)
		}
		workspaces[s.name] = ws
	}
	source, rec := newSource(t)
	k := e2eKit(source, map[string]any{
		"config": cfg, "sandbox": name, "workspace": "{{scenario.workspace}}", "plugin_dir": plugins,
	}, workspaces)

	start := time.Now()
	results := runArena(t, k.write(t, filepath.Join(dir, "kit")), e2eConcurrency, 15*time.Minute)
	t.Logf("%d sessions, %d at a time, ran in %v", len(e2eSessions), e2eConcurrency, time.Since(start).Round(time.Millisecond))

	checkE2EResults(t, results, rec)
	rec.checkOneSandboxPerSession(t, len(e2eSessions))
	for _, s := range e2eSessions {
		want := sessionFiles(s.name, s.want)
		entries, err := os.ReadDir(workspaces[s.name])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
			if b, err := os.ReadFile(filepath.Join(workspaces[s.name], e.Name())); err != nil || string(b) != want[e.Name()] {
				t.Errorf("session %s: %s holds %q (%v), want %q", s.name, e.Name(), b, err, want[e.Name()])
			}
		}
		if wantNames := slices.Sorted(maps.Keys(want)); !slices.Equal(got, wantNames) {
			t.Errorf("session %s: workspace holds %v, want %v", s.name, got, wantNames)
		}
	}
	dockertest.AssertNoContainers(t, label)
	for _, ws := range workspaces {
		out := dockertest.Docker(t, "volume", "ls", "-q", "--filter", "label="+dockerbox.LabelKind+"="+dockerbox.KindCache,
			"--filter", "label="+dockerbox.LabelWorkspace+"="+ws)
		if vols := strings.Fields(out); len(vols) > 0 {
			t.Errorf("cache volumes of %s left: %v", ws, vols)
		}
	}
}

func randomHex(t testing.TB) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}
