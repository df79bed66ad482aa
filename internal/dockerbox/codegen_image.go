package dockerbox

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// How a sandbox's image was chosen (the "image_by" detail).
const (
	imageByConfig   = "image"    // the entry's image key
	imageByLanguage = "language" // the entry's language key
	imageByDetected = "detected" // the workspace's language markers
	imageByDefault  = "default"  // nothing said otherwise
)

// imageChoice is the image a sandbox runs, what it serves, and why.
type imageChoice struct {
	ref       string
	languages []string // from the image's label; nil when it has none
	by        string
	detected  string // what detection found, when it ran
}

// details are the Provisioned details that say which image runs and why.
func (c imageChoice) details() map[string]string {
	d := map[string]string{"image": c.ref, "image_by": c.by, "languages": strings.Join(c.languages, ",")}
	if c.detected != "" {
		d["detected"] = c.detected
	}
	return d
}

func orNone(langs []string) string {
	if len(langs) == 0 {
		return "no labelled language"
	}
	return strings.Join(langs, ", ")
}

// chooseImage picks the image of a sandbox: the image key's; else the
// image serving the language key's languages; else the one serving the
// languages the workspace's markers show (workspace "" shows none); else
// the default image. An image that is missing, or a workspace no local
// image serves whole, is an error saying what to build.
func chooseImage(ctx context.Context, cli *client.Client, set codegenSettings, workspace string) (imageChoice, error) {
	switch {
	case set.image != "":
		langs, err := imageLanguages(ctx, cli, set.image)
		if err != nil {
			return imageChoice{}, err
		}
		return imageChoice{ref: set.image, languages: langs, by: imageByConfig}, nil
	case len(set.languages) > 0:
		return languageImage(ctx, cli, set.languages, imageByLanguage, "")
	}
	if workspace == "" {
		return languageImage(ctx, cli, []string{codegenimage.DefaultLanguage}, imageByDefault, "")
	}
	found, err := codegenimage.Detect(workspace)
	if err != nil {
		return imageChoice{}, sandbox.NewError(sandbox.KindStart, CodegenMode, err)
	}
	if len(found.Languages) == 0 {
		return languageImage(ctx, cli, []string{codegenimage.DefaultLanguage}, imageByDefault, found.String())
	}
	return languageImage(ctx, cli, found.Languages, imageByDetected, found.String())
}

// imageLanguages returns the languages an image's label lists; an image
// missing from the engine is an error.
func imageLanguages(ctx context.Context, cli *client.Client, ref string) ([]string, error) {
	img, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, imageMissing(ref)
		}
		return nil, provisionErr(ctx, cli, "inspect image "+ref, err)
	}
	if img.Config == nil {
		return nil, nil
	}
	return splitLanguages(img.Config.Labels[codegenimage.LanguagesLabel]), nil
}

func splitLanguages(label string) []string {
	if label == "" {
		return nil
	}
	return strings.Split(label, ",")
}

// languageImage finds the image that serves langs: the one named for
// them (codegenimage.ImageFor) when the engine has it, else the local
// sandboxd image serving the fewest languages that include them all.
func languageImage(ctx context.Context, cli *client.Client, langs []string, by, detected string) (imageChoice, error) {
	want := codegenimage.ImageFor("", langs...)
	images, err := localSandboxdImages(ctx, cli)
	if err != nil {
		return imageChoice{}, err
	}
	if i := slices.IndexFunc(images, func(im localImage) bool { return im.ref == want }); i >= 0 {
		return imageChoice{ref: want, languages: images[i].languages, by: by, detected: detected}, nil
	}
	best := -1
	for i, im := range images {
		if covers(im.languages, langs) && (best < 0 || len(im.languages) < len(images[best].languages)) {
			best = i
		}
	}
	if best >= 0 {
		return imageChoice{ref: images[best].ref, languages: images[best].languages, by: by, detected: detected}, nil
	}
	return imageChoice{}, noImageFor(langs, by, detected, want, images)
}

func covers(have, want []string) bool {
	for _, l := range want {
		if !slices.Contains(have, l) {
			return false
		}
	}
	return true
}

// noImageFor says which image is missing, what the engine has, and how
// to get one.
func noImageFor(langs []string, by, detected, want string, images []localImage) error {
	var b strings.Builder
	switch by {
	case imageByDetected:
		fmt.Fprintf(&b, "the workspace holds %s, and no local sandboxd image serves ", detected)
		if len(langs) > 1 {
			b.WriteString("all of them")
		} else {
			b.WriteString("it")
		}
	case imageByDefault:
		fmt.Fprintf(&b, "the default sandboxd image is missing")
	default:
		fmt.Fprintf(&b, "no local sandboxd image serves %s", strings.Join(langs, " and "))
	}
	fmt.Fprintf(&b, " (wanted %s; the docker sandbox never pulls). ", want)
	if len(images) == 0 {
		b.WriteString("The engine has no sandboxd image. ")
	} else {
		parts := make([]string, len(images))
		for i, im := range images {
			parts[i] = fmt.Sprintf("%s (%s)", im.ref, orNone(im.languages))
		}
		fmt.Fprintf(&b, "The engine has: %s. ", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, "Build it from the promptkit-sandbox repository with: make sandboxd-image LANGUAGES=%s", strings.Join(langs, ","))
	if by == imageByDetected {
		b.WriteString("; or set the sandbox's language (or image) key to choose one, and go without the other languages' tools")
	}
	return sandbox.NewError(sandbox.KindStart, CodegenMode+": "+b.String(), nil)
}

// localImage is a sandboxd image the engine has.
type localImage struct {
	ref       string
	languages []string
}

// localSandboxdImages lists the engine's images that carry the
// languages label, one entry per tag, sorted by reference.
func localSandboxdImages(ctx context.Context, cli *client.Client) ([]localImage, error) {
	res, err := cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("label", codegenimage.LanguagesLabel)})
	if err != nil {
		return nil, provisionErr(ctx, cli, "list images", err)
	}
	var out []localImage
	for _, s := range res.Items {
		langs := splitLanguages(s.Labels[codegenimage.LanguagesLabel])
		for _, tag := range s.RepoTags {
			if tag != "<none>:<none>" {
				out = append(out, localImage{ref: tag, languages: langs})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ref < out[j].ref })
	return out, nil
}
