package kubecluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// No registry is reachable, so every image a pod runs is built locally
// FROM scratch with docker build and copied into our containerd with
// `docker save | ctr images import`. Pods name them as docker build tagged
// them, with imagePullPolicy: Never (the kubelet never tries a pull).

// pauseSource is the pod sandbox's process: it holds the pod's namespaces
// and exits on SIGTERM or SIGINT. A pause binary of our own (the usual
// registry.k8s.io/pause cannot be pulled) compiled from this source. Like
// the usual one it reaps orphans: in a pod that shares its process
// namespace (shareProcessNamespace) it is PID 1, and what a container's
// processes leave behind is reparented to it.
const pauseSource = `// Command pause holds a pod's namespaces until it is told to stop, and
// reaps the orphans a shared process namespace hands it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range c {
		if sig != syscall.SIGCHLD {
			return
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
`

const pauseDockerfile = "FROM scratch\nCOPY pause /pause\nENTRYPOINT [\"/pause\"]\nLABEL org.promptkit.test=1 org.promptkit.test.image=pause\n"

// pauseRef is the pause image's reference: tagged by a hash of its source,
// its Dockerfile and the Go toolchain, like dockertest's images.
func pauseRef(ctx context.Context) (string, error) {
	goVersion, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("asking the go command for its version: %w", err)
	}
	h := sha256.Sum256([]byte(pauseSource + "\x00" + pauseDockerfile + "\x00" + string(goVersion) + target()))
	return "promptkit-test/pause:" + hex.EncodeToString(h[:])[:12], nil
}

// ensurePause builds the pause image unless the engine has it.
func ensurePause(ctx context.Context, ref string) error {
	if out, err := exec.CommandContext(ctx, "docker", "image", "ls", "-q", ref).Output(); err != nil {
		return fmt.Errorf("docker image ls: %w", err)
	} else if len(bytes.TrimSpace(out)) > 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "promptkit-pause-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"src/go.mod":  "module pause\n\ngo 1.26\n",
		"src/main.go": pauseSource,
		"Dockerfile":  pauseDockerfile,
	}
	if err := os.Mkdir(filepath.Join(dir, "src"), 0o755); err != nil { // #nosec G301 -- the pause image's build context
		return err
	}
	for name, content := range files {
		// #nosec G306 -- the pause image's build context: source and Dockerfile
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, "pause"), ".")
	build.Dir = filepath.Join(dir, "src")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("compiling pause: %w\n%s", err, out)
	}
	if out, err := exec.CommandContext(ctx, "docker", "build", "--force-rm", "--network", "none", "-q", "-t", ref, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("docker build %s: %w\n%s", ref, err, out)
	}
	return nil
}

// importImage copies an image from the Docker engine into the cluster's
// containerd (namespace k8s.io, where the CRI plugin looks).
func importImage(ctx context.Context, l layout, ref string) error {
	save := exec.CommandContext(ctx, "docker", "save", ref)
	imp := exec.CommandContext(ctx, "ctr", "--address", l.containerdSocket(), "--namespace", "k8s.io",
		"images", "import", "-")
	pipe, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	imp.Stdin = pipe
	var saveErr, impOut bytes.Buffer
	save.Stderr = &saveErr
	imp.Stdout, imp.Stderr = io.Discard, &impOut
	if err := save.Start(); err != nil {
		return fmt.Errorf("docker save %s: %w", ref, err)
	}
	impErr := imp.Run()
	waitErr := save.Wait()
	if waitErr != nil {
		return fmt.Errorf("docker save %s: %w: %s", ref, waitErr, strings.TrimSpace(saveErr.String()))
	}
	if impErr != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", ref, impErr, strings.TrimSpace(impOut.String()))
	}
	return nil
}

// ImportImage copies an image from the Docker engine into the cluster, once
// per cluster; a pod runs it by the same reference, with
// imagePullPolicy: Never.
func (c *Cluster) ImportImage(ctx context.Context, ref string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.imported[ref] {
		return nil
	}
	if err := importImage(ctx, c.l, ref); err != nil {
		return fmt.Errorf("kubecluster: importing %s: %w", ref, err)
	}
	c.imported[ref] = true
	return nil
}
