package dockertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// The Agent image's paths: the host CLI, and the plugin directory it is
// given, holding the kubectl plugin at AgentPluginVersion.
const (
	AgentCLI           = "/usr/local/bin/promptkit-sandbox"
	AgentPluginDir     = "/usr/local/lib/promptkit-sandbox/plugins"
	AgentPluginVersion = "0.1.0"
)

// agentFiles are the files of the Agent image, compiled static from the
// module the tests run in. Built once per process.
var agentFiles = func() func(context.Context) (map[string][]byte, error) {
	var once sync.Once
	var files map[string][]byte
	var err error
	return func(ctx context.Context) (map[string][]byte, error) {
		once.Do(func() { files, err = collectAgent(ctx) })
		return files, err
	}
}()

func collectAgent(ctx context.Context) (map[string][]byte, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return nil, err
	}
	out, err := os.MkdirTemp("", "promptkit-agent-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	plugin := "promptkit-sandbox-kubectl_v" + AgentPluginVersion
	builds := map[string][]string{
		AgentCLI:                              {"./cmd/promptkit-sandbox"},
		filepath.Join(AgentPluginDir, plugin): {"-ldflags", "-s -w -X main.version=" + AgentPluginVersion, "./cmd/promptkit-sandbox-kubectl"},
	}
	files := map[string][]byte{}
	for path, pkg := range builds {
		bin := filepath.Join(out, filepath.Base(path))
		args := append(append([]string{"build"}, hookBuildFlags...), "-o", bin)
		if _, err := goCommand(ctx, root, append(args, pkg...)...); err != nil {
			return nil, fmt.Errorf("compiling %s: %w", pkg[len(pkg)-1], err)
		}
		if files[path], err = os.ReadFile(bin); err != nil { // #nosec G304 -- the binary the go build above just wrote
			return nil, err
		}
	}
	return files, nil
}
