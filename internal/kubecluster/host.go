package kubecluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// What the cluster changes on the host outside its state directory, and
// how down undoes it:
//
//   - one iptables rule, FORWARD ACCEPT from our bridge to our bridge:
//     Docker sets the FORWARD policy to DROP with bridge-nf-call-iptables=1,
//     which would drop pod-to-pod traffic; removed by its comment;
//   - one nat rule, DNAT of the kubernetes Service to the apiserver (see
//     apiDNAT), removed by its comment;
//   - kube-proxy's chains (KUBE-*), removed by kube-proxy --cleanup, and
//     the kubelet's canary chains, removed by name;
//   - the bridge, and a veth per pod (gone with the pod's namespace; any
//     left are deleted with the bridge's other ports);
//   - network namespaces under /run/netns (cni-*), made by containerd;
//   - mounts under the state directory (overlay rootfs, shm, tmpfs
//     volumes), unmounted deepest first;
//   - the kubelet's cgroups (kubepods in every hierarchy);
//   - directories at fixed paths outside the state directory (hostDirs),
//     when they were not there before.

const netnsDir = "/run/netns"

// hostDirs are made at fixed paths no flag moves: the kubelet's device
// plugin socket (/var/lib/kubelet/device-plugins), its container log
// links, the CNI library's result cache, containerd's network namespace
// mounts. Down removes those the host did not have before.
var hostDirs = []string{"/var/lib/kubelet", "/var/log/containers", "/var/lib/cni", netnsDir}

// existingHostDirs lists the hostDirs that exist.
func existingHostDirs() []string {
	var out []string
	for _, d := range hostDirs {
		if _, err := os.Lstat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// removeHostDirs removes the hostDirs not in before, unless something is
// mounted under one (removing would reach into the mount).
func removeHostDirs(before []string) error {
	var errs []error
	for _, d := range existingHostDirs() {
		if slices.Contains(before, d) {
			continue
		}
		if m := mountsUnder(d); len(m) > 0 {
			errs = append(errs, fmt.Errorf("not removing %s: still mounted: %s", d, strings.Join(m, ", ")))
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Pods reach the apiserver, which listens on 127.0.0.1 only, at the
// "kubernetes" Service's address (10.96.0.1:443, what in-cluster clients
// use): one DNAT rule sends what comes in on our bridge for it to
// 127.0.0.1:6443. The Service cannot carry that itself: an endpoint may
// not be a loopback address. The kernel routes a packet arriving from
// outside to 127.0.0.1 only with route_localnet on its incoming
// interface; we set it on our bridge alone (never "all"), and it goes
// with the bridge. The kubelet's KUBE-FIREWALL rule lets DNATed
// connections through. So the harness makes the bridge itself, up front,
// with the gateway address the CNI bridge plugin would give it.

// apiDNAT is the nat rule (without the verb) taking pods' traffic for the
// kubernetes Service to the apiserver.
var apiDNAT = []string{"PREROUTING", "-i", bridgeName, "-d", serviceIP.String() + "/32", "-p", "tcp", "--dport", "443",
	"-m", "comment", "--comment", ruleComment, "-j", "DNAT", "--to-destination", "127.0.0.1:" + strconv.Itoa(apiserverPort)}

// setupBridge makes the pod bridge with its gateway address and
// route_localnet, and the DNAT rule to the apiserver.
func setupBridge() error {
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", bridgeIP + "/" + strings.SplitN(podCIDR, "/", 2)[1], "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
	}
	// #nosec G306 -- a sysctl under /proc/sys, which exists: the mode is never used
	if err := os.WriteFile(filepath.Join("/proc/sys/net/ipv4/conf", bridgeName, "route_localnet"), []byte("1"), 0o644); err != nil {
		return fmt.Errorf("setting route_localnet on %s: %w", bridgeName, err)
	}
	return iptables(append([]string{"-t", "nat", "-I", apiDNAT[0], "1"}, apiDNAT[1:]...)...)
}

func removeAPIDNAT() {
	for iptables(append([]string{"-t", "nat", "-D"}, apiDNAT...)...) == nil {
	}
}

// removeLinks deletes the bridge's remaining ports and the bridge.
func removeLinks() error {
	if _, err := os.Stat(filepath.Join("/sys/class/net", bridgeName)); err != nil {
		return nil
	}
	ports, _ := os.ReadDir(filepath.Join("/sys/class/net", bridgeName, "brif"))
	for _, p := range ports {
		_ = exec.Command("ip", "link", "del", p.Name()).Run()
	}
	if out, err := exec.Command("ip", "link", "del", bridgeName).CombinedOutput(); err != nil {
		return fmt.Errorf("ip link del %s: %w: %s", bridgeName, err, bytes.TrimSpace(out))
	}
	return nil
}

// listNetns lists the named network namespaces.
func listNetns() []string {
	entries, _ := os.ReadDir(netnsDir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// removeNetns unmounts and removes containerd's namespaces (cni-*) that
// were not there before the cluster started.
func removeNetns(before []string) error {
	var errs []error
	for _, name := range listNetns() {
		if !strings.HasPrefix(name, "cni-") || slices.Contains(before, name) {
			continue
		}
		p := filepath.Join(netnsDir, name)
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return slices.Compact(out)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountAll unmounts everything under dir, lazily when a plain unmount
// is refused.
func unmountAll(dir string) error {
	var errs []error
	for _, mp := range mountsUnder(dir) {
		if err := unix.Unmount(mp, 0); err != nil {
			if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
				errs = append(errs, fmt.Errorf("unmounting %s: %w", mp, err))
			}
		}
	}
	return errors.Join(errs...)
}

// cgroupRoots are the mounted cgroup hierarchies (v1 controllers, and the
// v2 one of a hybrid host).
func cgroupRoots() []string {
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	var roots []string
	for _, e := range entries {
		p := filepath.Join("/sys/fs/cgroup", e.Name())
		if _, err := os.Stat(filepath.Join(p, "cgroup.procs")); err == nil {
			roots = append(roots, p)
		}
	}
	return roots
}

// kubepodsCgroups lists the kubelet's top cgroup in every hierarchy that
// has one.
func kubepodsCgroups() []string {
	var out []string
	for _, r := range cgroupRoots() {
		p := filepath.Join(r, "kubepods")
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// removeCgroups removes the cgroup trees at paths, children first. A
// cgroup with processes left cannot be removed; that is reported.
func removeCgroups(paths []string) error {
	var errs []error
	for _, root := range paths {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs)
		for _, d := range dirs {
			if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}
