package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
)

// localImage is one sandboxd image the local engine has, as codegen
// images lists it.
type localImage struct {
	Ref       string   `json:"image"`
	ID        string   `json:"id"`
	Languages []string `json:"languages"`
	Size      string   `json:"size"`
	Created   string   `json:"created"`
}

// codegenImages lists the sandboxd images of the local Docker engine and
// the languages each serves (its languages label), by asking the docker
// CLI as a user would: docker_codegen picks among these.
func (e *cliEnv) codegenImages(args []string) int {
	var common commonFlags
	fs := newFlagSet("codegen images", e.stderr, &common)
	asJSON := fs.Bool("json", false, "print a JSON array")
	extra, ok, code := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(extra) > 0 {
		e.errorf("usage: promptkit-sandbox codegen images [--json]")
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()
	images, err := listSandboxdImages(ctx)
	if err != nil {
		e.errorf("codegen images: %v", err)
		return exitSandbox
	}
	if *asJSON {
		b, _ := json.Marshal(images)
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	printImages(e.stdout, images)
	return exitOK
}

func printImages(w io.Writer, images []localImage) {
	if len(images) == 0 {
		fmt.Fprintln(w, "No sandboxd image in the local engine; build one from the promptkit-sandbox repository with make sandboxd-image (Go) or make sandboxd-images (one per language).")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tLANGUAGES\tSIZE\tCREATED\tID")
	for _, im := range images {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", im.Ref, strings.Join(im.Languages, ","), im.Size, im.Created, im.ID)
	}
	_ = tw.Flush()
}

// listSandboxdImages asks docker image ls for the images carrying the
// languages label, one entry per tag, sorted by reference, and one
// docker image inspect of them all for the label's value (image ls
// cannot print a label of images).
func listSandboxdImages(ctx context.Context) ([]localImage, error) {
	if _, err := exec.LookPath("docker"); err != nil {
		return nil, fmt.Errorf("the docker CLI is not on the PATH: %w", err)
	}
	out, err := dockerOutput(ctx, "image", "ls", "--filter", "label="+codegenimage.LanguagesLabel,
		"--format", "{{.Repository}}:{{.Tag}}\t{{.ID}}\t{{.Size}}\t{{.CreatedSince}}")
	if err != nil {
		return nil, err
	}
	images := []localImage{}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || strings.Contains(f[0], "<none>") {
			continue
		}
		images = append(images, localImage{Ref: f[0], ID: f[1], Size: f[2], Created: f[3]})
		ids = append(ids, f[1])
	}
	if len(images) == 0 {
		return images, nil
	}
	out, err = dockerOutput(ctx, append([]string{"image", "inspect", "--format",
		`{{.Id}} {{index .Config.Labels "` + codegenimage.LanguagesLabel + `"}}`}, ids...)...)
	if err != nil {
		return nil, err
	}
	langs := map[string][]string{} // by short image ID, as image ls prints it
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		id, label, _ := strings.Cut(line, " ")
		id = strings.TrimPrefix(id, "sha256:")
		if len(id) >= 12 {
			langs[id[:12]] = strings.Split(label, ",")
		}
	}
	for i := range images {
		images[i].Languages = langs[images[i].ID]
	}
	sort.Slice(images, func(i, j int) bool { return images[i].Ref < images[j].Ref })
	return images, nil
}

func dockerOutput(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
