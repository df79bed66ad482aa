package kubecluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// A debDep is a Debian package and the file that shows it is installed.
type debDep struct {
	pkg  string
	file string // an absolute path, or a command looked up on PATH
}

// cniDir is where Debian's containernetworking-plugins puts the plugins.
const cniDir = "/usr/lib/cni"

// debDeps are what runs beside the binaries built from the module proxy.
// Debian's containerd is a second instance of the one Docker runs (we give
// it its own socket, root and state; Docker's is never touched).
var debDeps = []debDep{
	{"etcd-server", "etcd"},
	{"containerd", "containerd"},
	{"containerd", "ctr"},
	{"runc", "runc"},
	{"containernetworking-plugins", cniDir + "/bridge"},
	{"containernetworking-plugins", cniDir + "/host-local"},
	{"containernetworking-plugins", cniDir + "/loopback"},
	{"iptables", "iptables"},
	{"iproute2", "ip"},
	{"ipset", "ipset"}, // kube-router's policy sets
}

// missingDebs lists the packages of debDeps whose file is missing.
func missingDebs() []string {
	var missing []string
	for _, d := range debDeps {
		if have(d.file) {
			continue
		}
		if !contains(missing, d.pkg) {
			missing = append(missing, d.pkg)
		}
	}
	return missing
}

func have(file string) bool {
	if strings.HasPrefix(file, "/") {
		_, err := os.Stat(file)
		return err == nil
	}
	_, err := exec.LookPath(file)
	return err == nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// canInstall reports whether InstallDeps can install packages here: as
// root, on a machine with apt-get (the Makefile's install_debs rule).
func canInstall() bool {
	_, err := exec.LookPath("apt-get")
	return os.Geteuid() == 0 && err == nil
}

// aptLockWait makes apt-get wait this long for dpkg's lock.
const aptLockWait = "DPkg::Lock::Timeout=600"

// InstallDeps installs the Debian packages the cluster needs that are
// missing, with apt-get, as the Makefile's install_debs does. It does
// nothing when everything is there.
func InstallDeps(ctx context.Context, log func(format string, args ...any)) error {
	missing := missingDebs()
	if len(missing) == 0 {
		return nil
	}
	if !canInstall() {
		return fmt.Errorf("missing Debian packages %s: install them (apt-get install -y %s) or run as root",
			strings.Join(missing, ", "), strings.Join(missing, " "))
	}
	if log != nil {
		log("kubecluster: installing %s", strings.Join(missing, " "))
	}
	for _, args := range [][]string{
		{"update", "-qq"},
		append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...),
	} {
		// Another apt-get (a test binary's, a person's) may hold dpkg's
		// lock: wait for it rather than fail the run.
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"-o", aptLockWait}, args...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", args[0], err, out)
		}
	}
	if still := missingDebs(); len(still) > 0 {
		return fmt.Errorf("installed, but still missing: %s", strings.Join(still, ", "))
	}
	return nil
}
