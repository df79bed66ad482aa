package sandboxdimage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// A Debian-packaged language's layer is made in two steps, so that it
// holds what installing its packages changes and nothing else:
//
//  1. the host's apt-get, under a configuration of its own (none of the
//     host's sources, preferences or settings), resolves the packages
//     against the parent image's dpkg status and downloads the .deb
//     files the parent lacks;
//  2. dpkg installs them in a container of the parent image, with no
//     network, and docker commit makes the container's changes a layer.
//
// No apt in the image, as in the base: only dpkg, which the base has.

// debianKeyring is what the sources are signed with; the
// debian-archive-keyring package installs it (mmdebstrap needs it too).
const debianKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// installScript installs the .deb files in /debs with dpkg, round after
// round: dpkg refuses to unpack a package whose pre-dependency is not
// configured yet, and the next round takes it once the first has
// configured that. A package already installed at the same version is
// skipped. It then removes what dpkg leaves that the image has no use
// for.
const installScript = `set -u
export DEBIAN_FRONTEND=noninteractive
for round in 1 2 3 4 5 6; do
	todo=""
	for f in /debs/*.deb; do
		p=$(dpkg-deb -f "$f" Package)
		v=$(dpkg-deb -f "$f" Version)
		have=$(dpkg-query -W -f '${Status} ${Version}' "$p" 2>/dev/null || true)
		[ "$have" = "install ok installed $v" ] || todo="$todo $f"
	done
	if [ -z "$todo" ]; then
		rm -f /var/log/dpkg.log /var/log/alternatives.log /var/lib/dpkg/*-old /var/cache/debconf/*-old
		rm -rf /tmp/* /root/.cache
		exit 0
	fi
	echo "round $round: installing$todo"
	dpkg --force-confold --install $todo || true
done
echo "packages left uninstalled after 6 rounds:$todo" >&2
exit 1
`

// aptConfig is apt's whole configuration for the download (APT_CONFIG):
// it names every file and directory apt would otherwise take from the
// host, so the host's own sources (Ubuntu's, a vendor's), pinning and
// settings have no say.
func aptConfig(work, cache, arch string) string {
	var b strings.Builder
	set := func(k, v string) { fmt.Fprintf(&b, "%s %q;\n", k, v) }
	empty := filepath.Join(work, "empty")
	set("Dir::Etc::main", os.DevNull)
	set("Dir::Etc::Parts", empty)
	set("Dir::Etc::SourceList", filepath.Join(work, "sources.list"))
	set("Dir::Etc::SourceParts", empty)
	set("Dir::Etc::Preferences", os.DevNull)
	set("Dir::Etc::PreferencesParts", empty)
	set("Dir::Etc::TrustedParts", empty)
	set("Dir::State", filepath.Join(cache, "state"))
	set("Dir::State::Lists", filepath.Join(cache, "lists"))
	set("Dir::State::status", filepath.Join(work, "status"))
	set("Dir::Cache", filepath.Join(work, "cache"))
	set("Dir::Cache::archives", filepath.Join(work, "archives"))
	set("Dir::Log", filepath.Join(work, "log"))
	set("APT::Architecture", arch)
	fmt.Fprintf(&b, "APT::Architectures { %q; };\n", arch)
	set("APT::Install-Recommends", "false")
	set("APT::Install-Suggests", "false")
	set("Acquire::Languages", "none")
	// The lock files would be the host's; this apt shares nothing with it.
	set("Debug::NoLocking", "true")
	// apt drops to _apt to download, who cannot write the cache here.
	set("APT::Sandbox::User", "root")
	return b.String()
}

// sourcesList is debian.Sources signed by Debian's keyring.
func sourcesList(d Debian) string {
	var b strings.Builder
	for _, line := range d.Sources {
		if rest, ok := strings.CutPrefix(line, "deb "); ok {
			line = "deb [signed-by=" + debianKeyring + "] " + rest
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// downloadDebs downloads into work/archives the .deb files of packages
// and their dependencies that status (a dpkg status file's content)
// lacks, and returns their paths. cache keeps apt's lists between
// builds.
func downloadDebs(ctx context.Context, o Options, work, status string, packages []string) ([]string, error) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return nil, errors.New("apt-get is not installed: the language layers' Debian packages are downloaded with it (on Debian or Ubuntu, as the base's mmdebstrap is)")
	}
	if _, err := os.Stat(debianKeyring); err != nil {
		return nil, fmt.Errorf("the Debian archive keyring %s is missing: apt-get install debian-archive-keyring", debianKeyring)
	}
	arch, err := output(ctx, "dpkg", "--print-architecture")
	if err != nil {
		return nil, err
	}
	cache := filepath.Join(o.CacheDir, "apt")
	for _, dir := range []string{filepath.Join(work, "empty"), filepath.Join(work, "archives", "partial"),
		filepath.Join(work, "cache"), filepath.Join(work, "log"), filepath.Join(cache, "lists", "partial"), filepath.Join(cache, "state")} {
		if err := os.MkdirAll(dir, 0o755); err != nil { // #nosec G301 -- apt-get's working directories: its download sandbox (user _apt) must reach them
			return nil, err
		}
	}
	files := map[string]string{
		"apt.conf":     aptConfig(work, cache, strings.TrimSpace(arch)),
		"sources.list": sourcesList(debian),
		"status":       status,
	}
	for name, content := range files {
		// #nosec G306 -- apt-get's configuration, which its sandbox user (_apt) must read
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	apt := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"-q", "-y"}, args...)...)
		cmd.Env = append(os.Environ(), "APT_CONFIG="+filepath.Join(work, "apt.conf"), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s: %w: %s", strings.Join(args, " "), err, tail(out.String()))
		}
		return nil
	}
	start := time.Now()
	if err := apt("update"); err != nil {
		return nil, err
	}
	if err := apt(append([]string{"install", "--download-only"}, packages...)...); err != nil {
		return nil, err
	}
	debs, err := filepath.Glob(filepath.Join(work, "archives", "*.deb"))
	if err != nil {
		return nil, err
	}
	o.logf("downloaded %d packages for %s in %s", len(debs), strings.Join(packages, " "), time.Since(start).Round(time.Second))
	return debs, nil
}

// buildDebLayer installs in.packages on parentRef and tags the result
// ref, labelled with the layer's key.
func buildDebLayer(ctx context.Context, o Options, in debLayerInputs, parentRef, ref string) error {
	start := time.Now()
	work, err := os.MkdirTemp("", "sandboxd-layer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	status, err := docker(ctx, "run", "--rm", "--network", "none", "--user", "0:0", "--entrypoint", "cat", parentRef, "/var/lib/dpkg/status")
	if err != nil {
		return fmt.Errorf("reading %s's dpkg status: %w", parentRef, err)
	}
	debs, err := downloadDebs(ctx, o, work, status, in.packages)
	if err != nil {
		return fmt.Errorf("downloading the %s packages: %w", in.language, err)
	}
	if len(debs) == 0 {
		return fmt.Errorf("downloading the %s packages: apt-get downloaded nothing for %s", in.language, strings.Join(in.packages, " "))
	}
	name := "sandboxd-layer-" + in.language + "-" + in.key()[:12]
	_, _ = docker(context.WithoutCancel(ctx), "rm", "--force", name) // a build cut short left it
	defer func() { _, _ = docker(context.WithoutCancel(ctx), "rm", "--force", name) }()
	o.logf("installing %d packages for %s on %s", len(debs), in.language, parentRef)
	if _, err := docker(ctx, "run", "--name", name, "--network", "none", "--user", "0:0",
		"-v", filepath.Join(work, "archives")+":/debs:ro", "--entrypoint", "/bin/sh", parentRef, "-c", in.script); err != nil {
		return fmt.Errorf("installing the %s packages: %w", in.language, err)
	}
	if _, err := docker(ctx, "commit", "--change", "LABEL "+layerLabel+"="+in.key(),
		"--change", `ENTRYPOINT []`, "--change", `CMD ["/bin/bash"]`, name, ref); err != nil {
		return fmt.Errorf("committing the %s layer: %w", in.language, err)
	}
	o.logf("layer %s made in %s", ref, time.Since(start).Round(time.Second))
	return nil
}

// output runs a command and returns its stdout.
func output(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, tail(stderr.String()))
	}
	return stdout.String(), nil
}
