package sandboxdimage

import (
	"crypto/sha256"
	_ "embed" // the Dockerfiles and gitconfig
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
)

// recipeVersion changes whenever the way the image is assembled changes in
// a way the hashed inputs below would not show.
const recipeVersion = "2"

// StaticcheckVersion is the staticcheck run_lint finds in the image; the
// Makefile pins the same one for make lint (a test keeps them equal).
const StaticcheckVersion = "v0.8.2"

// GoplsVersion is the gopls find_definition, find_references and
// rename_symbol use in the image; the Makefile pins the same one for the
// host's tests (v0.24 needs Go 1.27).
const GoplsVersion = "v0.23.0"

// dockerfile builds the image's last layer; goDockerfile the Go layer.
//
//go:embed Dockerfile
var dockerfile string

//go:embed go.Dockerfile
var goDockerfile string

//go:embed gitconfig
var gitconfig string

// Debian is what mmdebstrap installs: the Essential packages (bash,
// coreutils, dash, grep, sed, tar, ...) plus Packages, from Sources.
type Debian struct {
	Suite    string
	Sources  []string // sources.list lines
	Packages []string
	DpkgOpts []string // --dpkgopt values: paths left out of the image
}

// debian is the image's Debian. No apt in the image: the agent cannot
// install anything without network or root anyway, and apt's lists and
// dependencies would cost space.
var debian = Debian{
	Suite: "bookworm",
	Sources: []string{
		"deb http://deb.debian.org/debian bookworm main",
		"deb http://deb.debian.org/debian bookworm-updates main",
		"deb http://deb.debian.org/debian-security bookworm-security main",
	},
	// git pulls in perl; ripgrep is what Grep runs, universal-ctags what
	// search_code indexes with, graphviz what render_diagram draws DOT
	// with; ca-certificates for git and go over HTTPS when a provider
	// allows network.
	Packages: []string{"bash", "ca-certificates", "coreutils", "git", "graphviz", "ripgrep", "universal-ctags"},
	DpkgOpts: []string{
		"path-exclude=/usr/share/man/*",
		"path-exclude=/usr/share/info/*",
		"path-exclude=/usr/share/locale/*",
		"path-exclude=/usr/share/doc/*",
		"path-include=/usr/share/doc/*/copyright",
	},
}

// goExcludedTop are the directories of GOROOT left out of the image, with
// every testdata directory: the Go distribution's own tests and API lists,
// which building, vetting and testing other modules never read (60 MB).
var goExcludedTop = []string{"test", "api"}

// hasher hashes named fields, each length-prefixed so that no two
// different sequences of fields hash alike.
type hasher struct{ h []byte }

func newHasher(kind string) *hasher {
	x := &hasher{}
	x.field("kind", []byte(kind))
	x.field("recipe", []byte(recipeVersion))
	return x
}

func (x *hasher) field(name string, data []byte) {
	x.h = fmt.Appendf(x.h, "%s %d\n", name, len(data))
	x.h = append(x.h, data...)
	sum := sha256.Sum256(x.h) // keep the running state small
	x.h = sum[:]
}

func (x *hasher) sum() string { return hex.EncodeToString(x.h) }

// baseKey hashes what the Debian root filesystem is made from: the
// package set and options, and the host's apt view of the archive
// (aptState), so that an `apt-get update` that brings new package
// versions rebuilds the base.
func baseKey(d Debian, aptState string) string {
	x := newHasher("base")
	x.field("suite", []byte(d.Suite))
	x.field("sources", []byte(strings.Join(d.Sources, "\n")))
	x.field("packages", []byte(strings.Join(d.Packages, " ")))
	x.field("dpkgopts", []byte(strings.Join(d.DpkgOpts, "\n")))
	x.field("apt", []byte(aptState))
	return x.sum()
}

// languagePackages are the Debian packages of each language's layer,
// installed on top of the base (Go's layer is the host's toolchain
// instead: Debian bookworm's golang-go is 1.19, too old for today's
// go.mod files). They are what sandboxd's run_tests, run_lint,
// run_typecheck and language servers run for the language
// (cmd/sandboxd/internal/verify, cmd/sandboxd/internal/lsp).
var languagePackages = map[string][]string{
	// pytest, mypy and flake8 are run_tests, run_typecheck and
	// run_lint; pyflakes3 the diagnostics after an edit; pylsp answers
	// find_definition, find_references and rename_symbol.
	codegenimage.Python: {"python3", "python3-pytest", "mypy", "flake8", "pyflakes3", "python3-pylsp"},
	// node --test, tsc and eslint.
	codegenimage.Node: {"nodejs", "node-typescript", "eslint"},
	// cargo test, cargo check and cargo clippy; rustfmt for the agent.
	// rustc links with the C toolchain it depends on.
	codegenimage.Rust: {"cargo", "rustc", "rust-clippy", "rustfmt"},
}

// goLayerInputs is what the Go layer is built from: the host's Go
// toolchain, staticcheck and gopls, with the standard library compiled
// into the build-cache seed.
type goLayerInputs struct {
	parent      string // the key of the image it is built on
	dockerfile  string
	staticcheck []byte // sha256 of the binary
	gopls       []byte
	goToolchain string // go version, GOROOT and what is left out of it

	// Where the files are, for the build context; not hashed.
	goroot, staticBin, goplsBin string
}

func (in goLayerInputs) key() string {
	x := newHasher("go-layer")
	x.field("parent", []byte(in.parent))
	x.field("Dockerfile", []byte(in.dockerfile))
	x.field("staticcheck", in.staticcheck)
	x.field("gopls", in.gopls)
	x.field("go", []byte(in.goToolchain))
	return x.sum()
}

// debLayerInputs is what a Debian-packaged language's layer is made of.
type debLayerInputs struct {
	parent   string // the key of the image it is installed on
	language string
	packages []string
	script   string // what installs them (installScript)
}

func (in debLayerInputs) key() string {
	x := newHasher("deb-layer")
	x.field("parent", []byte(in.parent))
	x.field("language", []byte(in.language))
	x.field("packages", []byte(strings.Join(in.packages, " ")))
	x.field("script", []byte(in.script))
	return x.sum()
}

// topInputs is what the image's last layer adds to the language layers:
// sandboxd, its D2 helper, its git configuration and its user.
type topInputs struct {
	parent     string // the key of the last language layer
	languages  []string
	dockerfile string
	gitconfig  string
	buildArgs  []string
	sandboxd   []byte // sha256 of the binary
	helper     []byte // sha256 of sandboxd-diagram, the D2 helper

	sandboxdBin string // where it is; not hashed
	helperBin   string // where the helper is; not hashed
}

func (in topInputs) key() string {
	x := newHasher("image")
	x.field("parent", []byte(in.parent))
	x.field("languages", []byte(strings.Join(in.languages, ",")))
	x.field("Dockerfile", []byte(in.dockerfile))
	x.field("gitconfig", []byte(in.gitconfig))
	x.field("build-args", []byte(strings.Join(in.buildArgs, "\n")))
	x.field("sandboxd", in.sandboxd)
	x.field("sandboxd-diagram", in.helper)
	return x.sum()
}

// aptListsDir is where apt keeps the archive indexes it last fetched.
var aptListsDir = "/var/lib/apt/lists"

// aptState returns the host's InRelease files for the sources, which name
// the archive's state (date and index hashes). A missing one counts as
// "absent": the host may use other mirrors, and then only the package
// list keys the base.
func aptState(d Debian) string {
	var b strings.Builder
	for _, line := range d.Sources {
		name, ok := inReleaseFile(line)
		if !ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(aptListsDir, name)) // #nosec G304 -- apt's list of an archive's release, in /var/lib/apt/lists
		if err != nil {
			data = []byte("absent")
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s %x\n", name, sum)
	}
	return b.String()
}

// inReleaseFile is the name apt gives the InRelease file of a
// sources.list line ("deb URI SUITE COMPONENT..."): the URI without its
// scheme, with every "/" turned into "_".
func inReleaseFile(line string) (string, bool) {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "deb" {
		return "", false
	}
	uri := f[1]
	if i := strings.Index(uri, "://"); i >= 0 {
		uri = uri[i+3:]
	}
	uri = strings.TrimSuffix(uri, "/") + "/dists/" + f[2] + "/InRelease"
	return strings.ReplaceAll(uri, "/", "_"), true
}
