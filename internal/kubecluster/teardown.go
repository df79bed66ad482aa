package kubecluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// recordHost notes what the host had before the cluster, so teardown
// removes only what the cluster added: named network namespaces, and
// kubepods cgroups (another kubelet's are not ours to remove).
func recordHost(l layout) error {
	for name, list := range map[string][]string{
		"netns-before":    listNetns(),
		"kubepods-before": kubepodsCgroups(),
		"chains-before":   presentKubeletChains(),
		"dirs-before":     existingHostDirs(),
	} {
		// #nosec G306 -- the list of what to tear down, beside the PID files; nothing secret
		if err := os.WriteFile(l.path("run", name), []byte(strings.Join(list, "\n")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// recorded reads a list recordHost wrote; a missing file means the cluster
// never got that far, so nothing of that kind can be its.
func recorded(l layout, name string) (list []string, ok bool) {
	data, err := os.ReadFile(l.path("run", name))
	if err != nil {
		return nil, false
	}
	return strings.Fields(string(data)), true
}

// stopGrace is how long a component gets between SIGTERM and SIGKILL.
// Nothing in the cluster is worth keeping, so only containerd, which
// tidies its shims and mounts on the way out, gets long; the apiserver
// otherwise spends 6 s draining connections of clients that are gone.
func stopGrace(name string) time.Duration {
	if name == "containerd" {
		return 10 * time.Second
	}
	return 2 * time.Second
}

// podDrainTimeout bounds waiting for the kubelet to stop every pod.
const podDrainTimeout = 60 * time.Second

// teardown stops the cluster in l and removes everything it made. It
// works from the state directory alone, so it also clears a cluster whose
// starter is gone; every step runs even when an earlier one failed.
func teardown(ctx context.Context, l layout, log logf) error {
	if _, err := os.Stat(string(l)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	// Pods first, through the API, while the kubelet runs: it stops their
	// sandboxes through the CRI, which tears down their network
	// namespaces and veths the proper way.
	start := time.Now()
	if err := drainPods(ctx, l); err != nil {
		log("kubecluster: draining pods: %v (cleaning up underneath)", err)
	}
	if d := time.Since(start); d > time.Second {
		log("kubecluster: draining pods took %s", d.Round(10*time.Millisecond))
	}
	for _, name := range slices.Backward(componentNames) {
		if name == "containerd" {
			removeContainers(ctx, l)
		}
		start := time.Now()
		if err := stopProcess(l, name, stopGrace(name)); err != nil {
			errs = append(errs, err)
		}
		if d := time.Since(start); d > time.Second {
			log("kubecluster: %s took %s to stop", name, d.Round(10*time.Millisecond))
		}
	}
	if killed := sweep(l); len(killed) > 0 {
		log("kubecluster: killed leftover processes:\n  %s", strings.Join(killed, "\n  "))
	}
	errs = append(errs, cleanIptables(ctx, l))
	if err := removeLinks(); err != nil {
		errs = append(errs, err)
	}
	if before, ok := recorded(l, "netns-before"); ok {
		errs = append(errs, removeNetns(before))
	}
	errs = append(errs, unmountAll(string(l)))
	if before, ok := recorded(l, "dirs-before"); ok {
		errs = append(errs, removeHostDirs(before))
	}
	if before, ok := recorded(l, "kubepods-before"); ok {
		var ours []string
		for _, cg := range kubepodsCgroups() {
			if !slices.Contains(before, cg) {
				ours = append(ours, cg)
			}
		}
		errs = append(errs, removeCgroups(ours))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tearing down %s: %w", l, err)
	}
	// Only with nothing mounted under it: RemoveAll would otherwise reach
	// into whatever a mount shows.
	if left := mountsUnder(string(l)); len(left) > 0 {
		return fmt.Errorf("tearing down %s: still mounted: %s", l, strings.Join(left, ", "))
	}
	if err := os.RemoveAll(string(l)); err != nil {
		return fmt.Errorf("removing %s: %w", l, err)
	}
	return nil
}

// drainPods deletes every pod and waits for the kubelet to confirm each
// gone, when the apiserver and kubelet still run.
func drainPods(ctx context.Context, l layout) error {
	if !anyRunning(l) {
		return nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", l.pki("admin.kubeconfig"))
	if err != nil {
		return err
	}
	cfg.Timeout = 10 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, podDrainTimeout)
	defer cancel()
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	grace := int64(1)
	for _, p := range pods.Items {
		_ = client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	}
	return waitFor(ctx, "every pod to stop", func(ctx context.Context) error {
		pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if n := len(pods.Items); n > 0 {
			return fmt.Errorf("%d pods left", n)
		}
		return nil
	})
}

// removeContainers kills and removes whatever containers our containerd
// still has (the kubelet leaves exited ones for its garbage collector),
// so their shims exit and their mounts go.
func removeContainers(ctx context.Context, l layout) {
	if !anyRunning(l) {
		return
	}
	ctr := func(args ...string) string {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(cctx, "ctr", append([]string{"--address", l.containerdSocket(), "--namespace", "k8s.io"}, args...)...).Output()
		return string(out)
	}
	for _, id := range strings.Fields(ctr("containers", "ls", "-q")) {
		ctr("tasks", "kill", "-s", "SIGKILL", id)
		ctr("tasks", "rm", "-f", id)
		ctr("containers", "rm", id)
	}
}

// cleanIptables removes kube-proxy's chains (kube-proxy --cleanup knows
// them all), the kubelet's canaries and our FORWARD rule.
func cleanIptables(ctx context.Context, l layout) error {
	var err error
	if bins, berr := cachedBinaries(ctx); berr == nil {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if out, cerr := exec.CommandContext(cctx, bins.Path("kube-proxy"), "--cleanup").CombinedOutput(); cerr != nil {
			err = fmt.Errorf("kube-proxy --cleanup: %w: %s", cerr, lastLines(string(out), 10))
		}
	}
	if before, ok := recorded(l, "chains-before"); ok {
		removeKubeletChains(before)
	}
	removeForwardRule()
	removeAPIDNAT()
	if rerr := removeKubeRouterRules(); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}

// cachedBinaries finds the built binaries without building.
func cachedBinaries(ctx context.Context) (Binaries, error) {
	root, err := CacheRoot()
	if err != nil {
		return Binaries{}, err
	}
	key, err := cacheKey(ctx)
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{Dir: root + "/" + key}
	if !complete(b) {
		return b, fmt.Errorf("no binaries in %s", b.Dir)
	}
	return b, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
