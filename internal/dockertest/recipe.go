package dockertest

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"
)

// hookSources are the Go test hooks, embedded so the images can be built
// from any working directory, and hashed from exactly what gets compiled.
//
//go:embed hooks
var hookSources embed.FS

// busyboxPath is where Debian's busybox-static puts its binary.
const busyboxPath = "/bin/busybox"

// recipeVersion changes whenever the way images are assembled changes in a
// way the hashed inputs below would not show.
const recipeVersion = "1"

// hookBuildFlags are the go build flags of the hooks: static, stripped and
// free of local paths.
var hookBuildFlags = []string{"-trimpath", "-ldflags", "-s -w"}

// baseDockerfile sets up busybox: applets as symlinks in /bin, a
// world-writable /tmp, users for `docker run --user nobody`.
const baseDockerfile = `FROM scratch
COPY busybox /bin/busybox
COPY etc/ /etc/
RUN ["/bin/busybox", "sh", "-c", "/bin/busybox --install -s /bin && mkdir -m 1777 /tmp"]
`

// etcFiles are the files under /etc of every image.
var etcFiles = map[string]string{ // #nosec G101 -- a test image's /etc/passwd and /etc/group: account names, no secrets
	"passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
	"group":  "root:x:0:\nnogroup:x:65534:\n",
}

// A recipe is one test image: its Dockerfile and whether the Go hooks go in.
type recipe struct {
	name       string
	dockerfile string
	withHooks  bool
	// files, when set, gives more files for the image, by their path in
	// it; they go in through the context's root/ and are hashed.
	files func(ctx context.Context) (map[string][]byte, error)
}

var recipes = map[string]recipe{
	Busybox: {name: Busybox, dockerfile: baseDockerfile},
	Hooks:   {name: Hooks, dockerfile: baseDockerfile + "COPY hooks/ /hooks/\n", withHooks: true},
	Sandboxd: {name: Sandboxd, dockerfile: baseDockerfile + "COPY root/ /\nENTRYPOINT [\"/usr/local/bin/sandboxd\"]\n",
		files: sandboxdFiles},
	Agent: {name: Agent, dockerfile: baseDockerfile + "COPY hooks/ /hooks/\nCOPY root/ /\n", withHooks: true, files: agentFiles},
}

// fullDockerfile labels the image last, so the layers above are shared
// between the images.
func (r recipe) fullDockerfile() string {
	return r.dockerfile + "LABEL " + testLabel + " " + imageLabelKey + "=" + r.name + "\n"
}

// ref is the image's reference: its repository and a tag hashed from every
// input of the build — Dockerfile, /etc files, the busybox binary and, for
// the hooks, their sources and the Go toolchain that compiles them. The
// compiled binaries are not hashed: the inputs decide them, and hashing
// sources lets a cache hit skip the compile.
func (r recipe) ref(ctx context.Context) (string, error) {
	h := sha256.New()
	field := func(name string, data []byte) {
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	field("recipe", []byte(recipeVersion))
	field("Dockerfile", []byte(r.fullDockerfile()))
	for _, name := range slices.Sorted(maps.Keys(etcFiles)) {
		field("etc/"+name, []byte(etcFiles[name]))
	}
	busybox, err := readBusybox()
	if err != nil {
		return "", err
	}
	field("busybox", busybox)
	if r.withHooks {
		if err := hashHooks(ctx, field); err != nil {
			return "", err
		}
	}
	if r.files != nil {
		files, err := r.files(ctx)
		if err != nil {
			return "", err
		}
		for _, name := range slices.Sorted(maps.Keys(files)) {
			field("root"+name, files[name])
		}
	}
	return repository + r.name + ":" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// hashHooks feeds the hook sources and the toolchain into the image hash.
func hashHooks(ctx context.Context, field func(string, []byte)) error {
	goVersion, err := goToolchain(ctx)
	if err != nil {
		return err
	}
	field("go", []byte(goVersion+" "+hookTarget()+" "+fmt.Sprint(hookBuildFlags)))
	return fs.WalkDir(hookSources, "hooks", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := hookSources.ReadFile(path)
		if err != nil {
			return err
		}
		field(path, data)
		return nil
	})
}

// build assembles the build context in a temporary directory, builds the
// image as ref and removes the directory.
func (r recipe) build(ctx context.Context, ref string) error {
	dir, err := os.MkdirTemp("", "promptkit-image-"+r.name+"-")
	if err != nil {
		return fmt.Errorf("making the build context: %w", err)
	}
	defer os.RemoveAll(dir)

	contextDir := filepath.Join(dir, "context")
	if err := r.writeContext(ctx, contextDir, filepath.Join(dir, "src")); err != nil {
		return fmt.Errorf("assembling the build context: %w", err)
	}
	start := time.Now()
	builds.Add(1)
	// --network none: no RUN step needs the network, and none is reachable.
	// --force-rm: a failed step leaves no intermediate container behind.
	if _, err := run(ctx, nil, "build", "--force-rm", "--network", "none", "--tag", ref, contextDir); err != nil {
		return err
	}
	pruneStale(ctx, start)
	return nil
}

// pruneStale removes dangling test images. Two processes that build the
// same image at once both tag it, and the first one's image is left
// dangling; the next build, of any test image, removes it. Only images
// from before this build started go: a build still in progress elsewhere
// could otherwise lose its image between committing and tagging it. Only
// final images carry the label, and images in use by a container are kept.
// Failing to tidy up leaves the new image as usable as ever, so errors are
// ignored.
func pruneStale(ctx context.Context, before time.Time) {
	_, _ = run(ctx, nil, "image", "prune", "--force",
		"--filter", "label="+testLabel,
		"--filter", "until="+strconv.FormatInt(before.Unix(), 10))
}

// writeContext writes the Dockerfile and every file it copies into dir;
// the hooks are compiled through a module written into srcDir.
func (r recipe) writeContext(ctx context.Context, dir, srcDir string) error {
	// #nosec G301 -- a Docker build context: the engine reads it, and the image's modes come from it
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		return err
	}
	files := map[string]string{"Dockerfile": r.fullDockerfile()}
	for name, content := range etcFiles {
		files[filepath.Join("etc", name)] = content
	}
	for name, content := range files {
		// #nosec G306 -- a Docker build context: the engine reads it, and the image's modes come from it
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	busybox, err := readBusybox()
	if err != nil {
		return err
	}
	// #nosec G306 -- the test image's shell: it must be executable by every user in it
	if err := os.WriteFile(filepath.Join(dir, "busybox"), busybox, 0o755); err != nil {
		return err
	}
	if r.files != nil {
		files, err := r.files(ctx)
		if err != nil {
			return err
		}
		for name, data := range files {
			dst := filepath.Join(dir, "root", filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil { // #nosec G301 -- a Docker build context: the image's directories take this mode
				return err
			}
			if err := os.WriteFile(dst, data, 0o755); err != nil { // #nosec G306 -- a binary for the test image, run there by its users
				return err
			}
		}
	}
	if r.withHooks {
		return compileHooks(ctx, srcDir, filepath.Join(dir, "hooks"))
	}
	return nil
}

// hookTarget is the platform the hooks are compiled for: Linux, on the
// host's architecture, which is the engine's when it runs on this machine.
func hookTarget() string {
	return "linux/" + runtime.GOARCH
}
