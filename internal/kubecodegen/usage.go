package kubecodegen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/kubebox"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// What each sandbox uses now goes in its Details under the provision
// package's Usage keys. The cluster has no metrics-server to ask, and
// the kubelet's stats need nodes/proxy, which is a key to every Pod on
// the node; so the provider reads the sandbox container's own cgroup
// files through one exec in it (pods/exec on the sandboxes' namespace,
// which the provider's Role already scopes). The container sees its own
// cgroup at /sys/fs/cgroup, v2 (a cgroup namespace) or v1 (one mount per
// controller; this project's test node is still on v1): the numbers are
// the kernel's, the ones the limits are enforced on.

// usageTimeout bounds the reads of one List: ls must answer even when
// the API server or a node is slow.
const usageTimeout = 2 * time.Second

// readUsage prints, on its first line, the version of the cgroup
// hierarchy the container sees ("v2", or "v1" on a node still on the
// legacy hierarchy, where each controller is its own mount) and what
// codegenimage.WorkspaceUsage counted of the workspace (nothing when du
// did not finish), and then the cgroup files, in the order
// parseCgroupUsage expects: memory in use, its limit, pids, CPU time.
// du is over before the shell becomes the one cat (exec): the read
// costs a single pid of the container's, which parseCgroupUsage does
// not count.
var readUsage = `ws=$(` + strings.Join(codegenimage.WorkspaceUsage, " ") + ` 2>/dev/null)
cd /sys/fs/cgroup || exit 1
if [ -e cgroup.controllers ]; then
  echo v2 "$ws"; exec cat memory.current memory.max pids.current cpu.stat
fi
echo v1 "$ws"; exec cat memory/memory.usage_in_bytes memory/memory.limit_in_bytes pids/pids.current cpuacct/cpuacct.usage`

// withUsage adds what each sandbox of list uses now to its details,
// reading them all at once.
func (p *Provider) withUsage(ctx context.Context, list []plugin.Provisioned) {
	ctx, cancel := context.WithTimeout(ctx, usageTimeout)
	defer cancel()
	usages := make([]map[string]string, len(list))
	var wg sync.WaitGroup
	for i := range list {
		if b, ok := p.boxes.Get(list[i].ID); ok {
			// A paused sandbox has no Pod to read.
			if b, ok := b.(*box); ok && b.rc != nil && !b.Paused() {
				wg.Go(func() {
					u, err := b.usage(ctx)
					if err != nil {
						b.log.Debug("reading a sandbox's usage", "id", b.o.id, "error", err)
					}
					usages[i] = u
				})
			}
		}
	}
	wg.Wait()
	for i, usage := range usages {
		if usage == nil {
			continue
		}
		// The listed Details are the held sandbox's own map: a copy
		// takes the usage, or every later List would repeat it.
		list[i].Details = maps.Clone(list[i].Details)
		maps.Copy(list[i].Details, usage)
	}
}

// usage reads the sandbox container's cgroup files and its workspace's
// size. An emptyDir workspace's limit is its sizeLimit, past which the
// kubelet evicts the Pod, or, in memory, its tmpfs's size, past which
// writes fail; a claim's is its storage's to enforce, or not.
func (b *box) usage(ctx context.Context) (map[string]string, error) {
	var stdout bytes.Buffer
	if err := b.exec(ctx, "cat of the cgroup files", readUsage, nil, &stdout); err != nil {
		return nil, err
	}
	usage, err := parseCgroupUsage(stdout.String())
	switch {
	case err != nil || b.o.set.claimName() != "":
	case !b.o.set.workspaceTmpfs.IsZero():
		usage[provision.UsageWorkspaceMax] = strconv.FormatInt(b.o.set.workspaceTmpfs.Value(), 10)
	default:
		usage[provision.UsageWorkspaceMax] = strconv.FormatInt(b.o.set.workspaceSize.Value(), 10)
	}
	return usage, err
}

// exec runs script with /bin/sh in the sandbox's container, with stdin
// (none when nil) and stdout; what (for the error) says what it does.
func (b *box) exec(ctx context.Context, what, script string, stdin io.Reader, stdout io.Writer) error {
	u := b.cs.CoreV1().RESTClient().Post().Namespace(b.o.ns).Resource("pods").Name(b.o.name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: containerName, Command: []string{"/bin/sh", "-c", script}, Stdin: stdin != nil, Stdout: true, Stderr: true,
		}, scheme.ParameterCodec).URL()
	ex, err := kubebox.NewExecutor(b.rc, u, nil)
	if err != nil {
		return err
	}
	// Only the last words are quoted: a tar of a large workspace may say
	// something of every file.
	stderr := bounded.Tail{Max: 4 << 10}
	if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: &stderr}); err != nil {
		return fmt.Errorf("exec %s in %s/%s: %w (stderr %q)", what, b.o.ns, b.o.name, err, strings.TrimSpace(string(stderr.Bytes())))
	}
	return nil
}

// noLimitV1 is where cgroup v1's memory.limit_in_bytes starts to mean
// no limit (the largest page-aligned value: 2^63 less a page).
const noLimitV1 = 1 << 62

// parseCgroupUsage turns readCgroup's output into the Usage details.
// The cat is one of the cgroup's pids while it reads: it is not counted.
// No memory limit ("max" on v2) leaves the limit out.
func parseCgroupUsage(out string) (map[string]string, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	version, workspace, _ := strings.Cut(lines[0], " ")
	if len(lines) < 5 || (version != "v1" && version != "v2") {
		return nil, fmt.Errorf("cgroup files: want the version, memory in use, its limit, pids and CPU time, got %q", out)
	}
	v2 := version == "v2"
	lines = lines[1:]
	num := func(what, v string) (uint64, error) {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cgroup %s: %q is no count", what, v)
		}
		return n, nil
	}
	mem, err := num("memory in use", lines[0])
	if err != nil {
		return nil, err
	}
	pids, err := num("pids.current", lines[2])
	if err != nil {
		return nil, err
	}
	var cpu float64
	if v2 {
		found := false
		for _, l := range lines[3:] {
			if v, ok := strings.CutPrefix(l, "usage_usec "); ok {
				usec, err := num("cpu.stat usage_usec", v)
				if err != nil {
					return nil, err
				}
				cpu, found = float64(usec)/1e6, true
			}
		}
		if !found {
			return nil, fmt.Errorf("cgroup cpu.stat: no usage_usec in %q", strings.Join(lines[3:], "\n"))
		}
	} else {
		nsec, err := num("cpuacct.usage", lines[3])
		if err != nil {
			return nil, err
		}
		cpu = float64(nsec) / 1e9
	}
	usage := map[string]string{
		provision.UsageMemory:     strconv.FormatUint(mem, 10),
		provision.UsagePids:       strconv.FormatUint(max(pids, 1)-1, 10),
		provision.UsageCPUSeconds: strconv.FormatFloat(cpu, 'f', 3, 64),
	}
	if n, ok := codegenimage.ParseWorkspaceUsage(workspace); ok {
		usage[provision.UsageWorkspace] = strconv.FormatUint(n, 10)
	}
	if limit := strings.TrimSpace(lines[1]); limit != "max" {
		n, err := num("memory limit", limit)
		if err != nil {
			return nil, err
		}
		if n < noLimitV1 {
			usage[provision.UsageMemoryMax] = strconv.FormatUint(n, 10)
		}
	}
	return usage, nil
}
