package dockertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The test images, by name.
const (
	// Busybox is FROM scratch with a static /bin/busybox and its applets as
	// symlinks in /bin (sh, cat, sleep, env, echo, head, tr, kill, ps, wc,
	// ...), a writable /tmp, and an /etc/passwd that knows root and nobody.
	Busybox = "busybox"
	// Hooks is Busybox plus the static Go test hooks under /hooks (sources
	// in hooks/): echo, sleep, envdump, exitcode, flood, verdict.
	Hooks = "hooks"
	// Sandboxd is Busybox plus a static sandboxd (built from this module)
	// at /usr/local/bin/sandboxd, its ENTRYPOINT, and the host's ripgrep
	// with the libraries it loads: enough for sandboxd to start and serve
	// its tools, a stand-in for the real image (make sandboxd-image).
	Sandboxd = "sandboxd"
	// Agent is Hooks plus a static promptkit-sandbox (AgentCLI) and the
	// kubectl plugin in AgentPluginDir, built from this module: an agent
	// container that runs hooks through kubectl_exec, for the deploy
	// manifests applied to a real cluster.
	Agent = "agent"
)

// repository prefixes every test image's reference, and testLabel marks
// them, so they are easy to find and remove:
//
//	docker image rm $(docker image ls -q --filter label=org.promptkit.test=1)
const (
	repository    = "promptkit-test/"
	testLabel     = "org.promptkit.test=1"
	imageLabelKey = "org.promptkit.test.image" // its value names the image
)

// buildTimeout bounds one image build, hook compilation included.
const buildTimeout = 10 * time.Minute

// builds counts the docker builds this process ran; tests use it to tell a
// cache hit from a rebuild.
var builds atomic.Int64

// built remembers the images this process has already made sure of, one
// entry per name, so concurrent callers wait for a single build.
var built = newOnceCache()

// Image returns the reference of a locally built test image, building it
// first if needed. Images are tagged by a hash of their content (e.g.
// "promptkit-test/hooks:3f2a9c1d0b7e"), so a second call, a second test
// binary or `make images` reuses the build. It skips the test when there is
// no engine or no static busybox to build from (failing it instead under
// CI, as Require does), and fails it when the image cannot be built.
func Image(t testing.TB, name string) string {
	t.Helper()
	Require(t)
	need(t, busyboxProblem())
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	ref, err := ensure(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// BuildAll builds every test image that is not built yet and returns their
// references by name; it is what `make images` runs.
func BuildAll(ctx context.Context) (map[string]string, error) {
	if err := engineError(); err != nil {
		return nil, err
	}
	refs := make(map[string]string, len(recipes))
	for _, name := range Names() {
		ref, err := ensure(ctx, name)
		if err != nil {
			return nil, err
		}
		refs[name] = ref
	}
	return refs, nil
}

// Names lists the test images, sorted.
func Names() []string {
	names := make([]string, 0, len(recipes))
	for name := range recipes {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ensure returns the reference of the named image, building it when the
// engine does not have it yet.
func ensure(ctx context.Context, name string) (string, error) {
	r, ok := recipes[name]
	if !ok {
		return "", fmt.Errorf("dockertest: no test image %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return ensureRecipe(ctx, r)
}

// ensureRecipe is ensure for a recipe in hand.
func ensureRecipe(ctx context.Context, r recipe) (string, error) {
	return built.get(r.name, func() (string, error) {
		ref, err := r.ref(ctx)
		if err != nil {
			return "", fmt.Errorf("dockertest: image %s: %w", r.name, err)
		}
		have, err := imageExists(ctx, ref)
		if err != nil || have {
			return ref, err
		}
		if err := r.build(ctx, ref); err != nil {
			return "", fmt.Errorf("dockertest: building image %s: %w", ref, err)
		}
		return ref, nil
	})
}

// imageExists reports whether the engine has the image.
func imageExists(ctx context.Context, ref string) (bool, error) {
	res, err := run(ctx, nil, "image", "ls", "--quiet", ref)
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(res.stdout) != "", nil
}

// onceCache runs a function once per key and remembers its result; a
// failure is not remembered, so the next caller tries again.
type onceCache struct {
	mu      sync.Mutex
	entries map[string]*onceEntry
}

type onceEntry struct {
	mu    sync.Mutex // held while the value is being made
	value string
	done  bool
}

func newOnceCache() *onceCache {
	return &onceCache{entries: make(map[string]*onceEntry)}
}

func (c *onceCache) get(key string, fill func() (string, error)) (string, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if !ok {
		e = &onceEntry{}
		c.entries[key] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return e.value, nil
	}
	v, err := fill()
	if err != nil {
		return "", err
	}
	e.value, e.done = v, true
	return v, nil
}

// forget drops every remembered value.
func (c *onceCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}
