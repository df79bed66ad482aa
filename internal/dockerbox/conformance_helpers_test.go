package dockerbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockerbox"
	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// conformanceSlack is how late a killed call may return: removing a
// container, or killing a process through a second exec, takes the
// engine seconds when the machine is busy.
const conformanceSlack = 20 * time.Second

// conformanceOpener opens a sandbox of a mode: through the Factory, or
// through the plugin binary.
type conformanceOpener func(t *testing.T, name, mode string, cfg map[string]any) sandbox.Sandbox

// conformanceInProcess opens sandboxes with the package's Factories.
func conformanceInProcess(t *testing.T, name, mode string, cfg map[string]any) sandbox.Sandbox {
	t.Helper()
	factory := map[string]sandbox.Factory{dockerbox.RunMode: dockerbox.RunFactory, dockerbox.ExecMode: dockerbox.ExecFactory}[mode]
	sb, err := factory(context.Background(), name, cfg)
	if err != nil {
		t.Fatalf("%s Factory: %v", mode, err)
	}
	return sb
}

// conformancePlugin builds the plugin binary into a directory of its own
// and returns an opener that has a plugin host, which discovers and
// starts that binary, open the sandboxes. The host stops the plugin when
// t ends.
func conformancePlugin(t *testing.T) conformanceOpener {
	t.Helper()
	return conformanceOpener(plugintest.Host(t, "promptkit-sandbox-docker", "../../cmd/promptkit-sandbox-docker"))
}

// conformanceName is a sandbox name no other test uses; the containers
// labelled with it go when t ends, whatever the test did.
func conformanceName(t *testing.T) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "conf-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())) + "-" + hex.EncodeToString(b[:])
	dockertest.Cleanup(t, dockerbox.LabelName+"="+name)
	return name
}

// conformanceRunCell is a docker_run cell: a fresh busybox container per
// call, with no network.
func conformanceRunCell(name, image string, open conformanceOpener, cfg map[string]any, exempt ...string) sandboxtest.Cell {
	return sandboxtest.Cell{
		Name: name,
		Open: func(t *testing.T, extra map[string]any) sandbox.Sandbox {
			full := map[string]any{"image": image, "network": "none"}
			maps.Copy(full, cfg)
			maps.Copy(full, extra)
			return open(t, conformanceName(t), dockerbox.RunMode, full)
		},
		Options: sandboxtest.Options{
			KillTimeout: 3 * time.Second,
			Slack:       conformanceSlack,
			Remains:     conformanceContainersLeft,
			Exempt:      conformanceExempt(exempt),
		},
	}
}

// conformanceExecCell is a docker_exec cell: calls run in one long-lived
// busybox container (with an init, as a sidecar has), started for the
// cell when it first opens a sandbox. exempt pairs case names with the
// reason each cannot hold in the cell.
func conformanceExecCell(name, image string, open conformanceOpener, cfg map[string]any, exempt ...string) sandboxtest.Cell {
	var once sync.Once
	var container string
	return sandboxtest.Cell{
		Name: name,
		Open: func(t *testing.T, extra map[string]any) sandbox.Sandbox {
			once.Do(func() {
				container = dockertest.Docker(t, "run", "-d", "--init", "--network", "none",
					"--label", dockertest.UniqueLabel(t), image, "sleep", "3600")
			})
			if container == "" {
				t.Fatal("the cell's container did not start")
			}
			full := map[string]any{"container": container}
			maps.Copy(full, cfg)
			maps.Copy(full, extra)
			return open(t, conformanceName(t), dockerbox.ExecMode, full)
		},
		Options: sandboxtest.Options{KillTimeout: 3 * time.Second, Slack: conformanceSlack,
			Exempt: conformanceExempt(exempt)},
	}
}

// conformanceExempt turns case, reason, case, reason... into a map.
func conformanceExempt(pairs []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}

// conformanceContainersLeft lists the containers that the processes of a
// killed docker_run call ran in and that still exist.
func conformanceContainersLeft(t testing.TB, procs []sandboxtest.Proc) []string {
	seen := map[string]bool{}
	var left []string
	for _, p := range procs {
		if p.Container == "" || seen[p.Container] {
			continue
		}
		seen[p.Container] = true
		if out := dockertest.Docker(t, "ps", "-a", "-q", "--no-trunc", "--filter", "id="+p.Container); out != "" {
			left = append(left, "container "+p.Container[:12]+" (of a call that timed out)")
		}
	}
	return left
}
