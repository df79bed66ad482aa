package kubecluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// k8s.io/kubernetes is not meant to be required by other modules: its
// go.mod replaces each of its ~33 staging modules (k8s.io/api, ...) with a
// directory of its own tree and requires them at v0.0.0. A module that
// requires it must therefore replace each of them with the released
// staging version itself. buildModule writes that go.mod, with the list of
// staging modules read from k8s.io/kubernetes's own go.mod, so a version
// bump needs no hand-kept list.

// moduleInfo is what `go mod download -json` says about a module.
type moduleInfo struct {
	Dir   string // the extracted module in the module cache
	GoMod string // its go.mod in the module cache
	Error string
}

// downloadKubernetes fetches k8s.io/kubernetes at Version into the module
// cache (a no-op when it is there) and says where it is.
func downloadKubernetes(ctx context.Context, dir string, log logf) (moduleInfo, error) {
	out, err := goCmd(ctx, dir, log, "mod", "download", "-json", "k8s.io/kubernetes@"+Version)
	var info moduleInfo
	if jerr := json.Unmarshal(out, &info); jerr != nil && err == nil {
		err = fmt.Errorf("reading go mod download's answer: %w", jerr)
	}
	if err == nil && info.Error != "" {
		err = fmt.Errorf("%s", info.Error)
	}
	if err != nil {
		return info, fmt.Errorf("downloading k8s.io/kubernetes@%s: %w", Version, err)
	}
	return info, nil
}

// stagingReplace matches a go.mod line replacing a staging module with its
// directory in the tree: `k8s.io/api => ./staging/src/k8s.io/api`.
var stagingReplace = regexp.MustCompile(`^\s*(?:replace\s+)?(k8s\.io/[^\s]+)\s+=>\s+\./staging/`)

// stagingModules lists the modules k8s.io/kubernetes's go.mod replaces with
// staging directories.
func stagingModules(goMod string) ([]string, error) {
	f, err := os.Open(goMod) // #nosec G304 -- k8s.io/kubernetes's go.mod in the module cache
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mods []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := stagingReplace.FindStringSubmatch(sc.Text()); m != nil {
			mods = append(mods, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("%s replaces no staging modules; has its layout changed?", goMod)
	}
	return mods, nil
}

// patchedDir is where, inside the build module, the patched copy of
// k8s.io/kubernetes goes.
const patchedDir = "kubernetes"

// goModFile is the go.mod of the build module.
func goModFile(staging []string) string {
	var b strings.Builder
	b.WriteString("module promptkit-sandbox.local/kubebuild\n\ngo 1.26.0\n\n")
	b.WriteString("require k8s.io/kubernetes " + Version + "\n\nreplace (\n")
	for _, m := range staging {
		fmt.Fprintf(&b, "\t%s => %s %s\n", m, m, stagingVersion)
	}
	b.WriteString(")\n\n// The patched copy (patch.go).\nreplace k8s.io/kubernetes => ./" + patchedDir + "\n")
	return b.String()
}

// writeModule writes the build module into dir, fetching k8s.io/kubernetes
// first, and returns where the module cache keeps k8s.io/kubernetes.
func writeModule(ctx context.Context, dir string, log logf) (moduleInfo, error) {
	// An empty go.mod first: go mod download needs a module to run in
	// that does not pull k8s.io/kubernetes's unresolvable v0.0.0s.
	// #nosec G306 -- a go.mod, nothing secret
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module promptkit-sandbox.local/kubebuild\n\ngo 1.26.0\n"), 0o644); err != nil {
		return moduleInfo{}, err
	}
	info, err := downloadKubernetes(ctx, dir, log)
	if err != nil {
		return info, err
	}
	staging, err := stagingModules(info.GoMod)
	if err != nil {
		return info, err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goModFile(staging)), 0o644); err != nil { // #nosec G306 -- a go.mod, nothing secret
		return info, err
	}
	return info, nil
}
