package kubecluster

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A hostSnapshot is what the cluster could leave behind on the host, each
// kind as a sorted list of lines that compare by equality. Other tests may
// run on the machine meanwhile (Docker containers come and go, with their
// mounts, veths, shims and listeners), so each kind keeps only what could
// be the cluster's: its processes (by command line or binary), mounts
// outside Docker's directories, containerd's network namespaces (cni-*),
// links not attached to a Docker bridge, iptables lines of Kubernetes, CNI
// or ours, listeners on the cluster's ports (every other listener belongs
// to a process, and none of those may be left), the kubelet's cgroups.
type hostSnapshot map[string][]string

// protectedSysctls are the kernel settings the stock kubelet changes at
// start (setupKernelTunables), plus those kube-proxy would change with
// other settings (route_localnet, conntrack limits and timeouts).
var protectedSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"net/ipv4/conf/all/route_localnet", "net/ipv4/ip_forward",
	"net/bridge/bridge-nf-call-iptables",
	"net/netfilter/nf_conntrack_max", "net/netfilter/nf_conntrack_tcp_timeout_established",
	"net/netfilter/nf_conntrack_tcp_timeout_close_wait", "net/netfilter/nf_conntrack_tcp_be_liberal",
	"net/netfilter/nf_conntrack_udp_timeout", "net/netfilter/nf_conntrack_udp_timeout_stream",
}

func sysctls(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, name := range protectedSysctls {
		v, err := os.ReadFile(filepath.Join("/proc/sys", name))
		if err != nil {
			t.Fatalf("reading sysctl %s: %v", name, err)
		}
		out = append(out, name+"="+strings.TrimSpace(string(v)))
	}
	slices.Sort(out)
	return out
}

// snapshotHost records what the host has that a cluster would add to.
func snapshotHost(t testing.TB, l layout) hostSnapshot {
	t.Helper()
	s := hostSnapshot{
		"sysctls":   sysctls(t),
		"processes": clusterProcesses(l),
		"mounts":    mountPoints(t),
		"netns":     cniNetns(),
		"links":     links(t),
		"iptables":  iptablesRules(t, "iptables-save"),
		"ip6tables": iptablesRules(t, "ip6tables-save"),
		"listeners": listeners(t),
		"cgroups":   kubepodsCgroups(),
		"ipsets":    ipsets(t),
		"hostdirs":  existingHostDirs(),
	}
	if _, err := os.Stat(string(l)); err == nil {
		s["statedir"] = []string{string(l)}
	}
	for k := range s {
		slices.Sort(s[k])
	}
	return s
}

// removalsCount are the kinds where a line gone is as bad as a line added:
// a setting changed, someone else's rule or link deleted. Elsewhere a
// line gone is the machine going about its business (a Docker container
// of another package exiting unmounts its rootfs).
var removalsCount = []string{"sysctls", "iptables", "ip6tables", "links"}

// diff lists, per kind, the lines after has that before had not, and,
// for removalsCount, the reverse.
func (before hostSnapshot) diff(after hostSnapshot) []string {
	var out []string
	keys := make([]string, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	for k := range before {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, line := range after[k] {
			if !slices.Contains(before[k], line) {
				out = append(out, fmt.Sprintf("%s: added %s", k, line))
			}
		}
		for _, line := range before[k] {
			if slices.Contains(removalsCount, k) && !slices.Contains(after[k], line) {
				out = append(out, fmt.Sprintf("%s: removed %s", k, line))
			}
		}
	}
	return out
}

// clusterProcesses lists the processes naming the state directory (every
// component, our containerd's shims), running a binary from the cache, or
// running etcd.
func clusterProcesses(l layout) []string {
	cache, _ := CacheRoot()
	var out []string
	for _, pid := range pids() {
		if pid == os.Getpid() {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		if !ours(l, pid) && !(cache != "" && strings.HasPrefix(exe, cache)) && filepath.Base(exe) != "etcd" {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		out = append(out, strconv.Itoa(pid)+" "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

func mountPoints(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && !strings.Contains(f[4], "/docker/") {
			out = append(out, f[4])
		}
	}
	return out
}

func links(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		master, _ := os.Readlink(filepath.Join("/sys/class/net", e.Name(), "master"))
		if m := filepath.Base(master); strings.HasPrefix(m, "docker") || strings.HasPrefix(m, "br-") {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}

func cniNetns() []string {
	var out []string
	for _, name := range listNetns() {
		if strings.HasPrefix(name, "cni-") {
			out = append(out, name)
		}
	}
	return out
}

// ourIptables matches the iptables lines the cluster could make:
// Kubernetes' chains, CNI plugins' chains, and ours.
var ourIptables = regexp.MustCompile(`KUBE|CNI|` + bridgeName + `|` + ruleComment)

// counters matches iptables-save's packet and byte counters.
var counters = regexp.MustCompile(`^\[\d+:\d+\]|\s\[\d+:\d+\]$`)

// iptablesRules is iptables-save's output without comments and counters,
// so that only rules and chains compare.
func iptablesRules(t testing.TB, save string) []string {
	t.Helper()
	out, err := exec.Command(save).Output()
	if err != nil {
		t.Fatalf("%s: %v", save, err)
	}
	var rules []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	table := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"), line == "COMMIT":
			continue
		case strings.HasPrefix(line, "*"):
			table = line[1:]
			continue
		}
		if ourIptables.MatchString(line) {
			rules = append(rules, table+" "+counters.ReplaceAllString(line, ""))
		}
	}
	return rules
}

// listeners lists the TCP sockets listening on the cluster's ports.
func listeners(t testing.TB) []string {
	t.Helper()
	var ourPorts []string
	for _, p := range ports {
		ourPorts = append(ourPorts, fmt.Sprintf(":%04X", p))
	}
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 3 && fields[3] == "0A" && slices.ContainsFunc(ourPorts, func(p string) bool { return strings.HasSuffix(fields[1], p) }) {
				out = append(out, filepath.Base(f)+" "+fields[1])
			}
		}
	}
	return out
}

// ipsets lists kube-router's ipsets.
func ipsets(t testing.TB) []string {
	t.Helper()
	out, err := exec.Command("ipset", "list", "-n").Output()
	if err != nil {
		t.Fatalf("ipset list: %v", err)
	}
	var sets []string
	for _, name := range strings.Fields(string(out)) {
		if kubeRouterSet.MatchString(name) {
			sets = append(sets, name)
		}
	}
	return sets
}
