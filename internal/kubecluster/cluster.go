package kubecluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/flock"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options configure Start.
type Options struct {
	// Dir is the state directory: PKI, configuration, logs, etcd's data,
	// containerd's root and state, the kubelet's root. Default DefaultDir().
	// It is emptied by Start and removed by Stop.
	Dir string
	// Log receives progress lines (and a cold build's go output); nil
	// discards them.
	Log func(format string, args ...any)
	// Detach leaves the cluster to outlive this process, for make kube-up:
	// Stop (or StopDir from another process) ends it. Without it, a later
	// Start treats a cluster whose starter died as stale and clears it.
	Detach bool

	// claimed runs once the machine's cluster is this Start's (the lock
	// taken, what a dead run left cleared) and before anything starts:
	// TestLifecycle's "before" snapshot, which another run's cluster
	// must not be in.
	claimed func()
}

// Cluster is a running single-node cluster.
type Cluster struct {
	Dir        string       // the state directory
	Kubeconfig string       // the admin kubeconfig (system:masters)
	Kubectl    string       // a kubectl of the cluster's version
	Config     *rest.Config // the admin client configuration
	Client     kubernetes.Interface
	Binaries   Binaries

	l      layout
	log    logf
	unlock func()

	mu       sync.Mutex
	imported map[string]bool
	stopped  bool
}

// startTimeout bounds bringing the cluster up once the binaries exist.
const startTimeout = 3 * time.Minute

// Start brings a cluster up: it installs missing Debian packages (as
// root), builds the binaries on first use, and starts containerd, etcd,
// the control plane, the kubelet and kube-proxy. It returns once the node
// is Ready and the default namespace can take pods. On failure it tears
// down what it started and the error carries the failing component's log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if problem := Problem(); problem != "" {
		return nil, errors.New("kubecluster: " + problem)
	}
	if opts.Dir == "" {
		opts.Dir = DefaultDir()
	}
	log := logf(opts.Log)
	if log == nil {
		log = func(string, ...any) {}
	}
	if err := InstallDeps(ctx, log); err != nil {
		return nil, fmt.Errorf("kubecluster: %w", err)
	}
	bins, err := EnsureBinaries(ctx, log)
	if err != nil {
		return nil, fmt.Errorf("kubecluster: %w", err)
	}
	pause, err := pauseRef(ctx)
	if err != nil {
		return nil, fmt.Errorf("kubecluster: %w", err)
	}
	if err := ensurePause(ctx, pause); err != nil {
		return nil, fmt.Errorf("kubecluster: building the pause image: %w", err)
	}
	l := layout(opts.Dir)
	unlock, err := claim(ctx, l, opts.Detach, log)
	if err != nil {
		return nil, fmt.Errorf("kubecluster: %w", err)
	}
	if opts.claimed != nil {
		opts.claimed()
	}
	c := &Cluster{
		Dir: opts.Dir, Kubeconfig: l.pki("admin.kubeconfig"), Kubectl: bins.Path("kubectl"),
		Binaries: bins, l: l, log: log, unlock: unlock, imported: map[string]bool{},
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := c.up(ctx, pause); err != nil {
		stopErr := c.Stop(context.Background())
		return nil, fmt.Errorf("kubecluster: starting: %w", errors.Join(err, stopErr))
	}
	log("kubecluster: up in %s (state in %s)", time.Since(start).Round(10*time.Millisecond), opts.Dir)
	if opts.Detach {
		unlock()
		c.unlock = nil
	}
	return c, nil
}

// Problem says why no cluster can run on this machine, or "" when one can
// (given the Debian packages, which Start installs when it may).
func Problem() string {
	switch {
	case runtime.GOOS != "linux":
		return "a cluster needs Linux (this is " + runtime.GOOS + ")"
	case os.Geteuid() != 0:
		return "a cluster needs root (the kubelet, containerd and iptables do)"
	case len(missingDebs()) > 0 && !canInstall():
		return "missing Debian packages " + strings.Join(missingDebs(), ", ") + " and no apt-get as root to install them"
	}
	for _, cmd := range []string{"go", "docker"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return "no " + cmd + " command (" + err.Error() + ")"
		}
	}
	return ""
}

// claim makes this process the cluster's owner: one cluster per machine
// (the ports are fixed). It waits for another test binary's cluster to go;
// refuses when make kube-up's cluster runs; and clears what a crashed
// owner left behind.
func claim(ctx context.Context, l layout, detach bool, log logf) (unlock func(), err error) {
	if err := os.MkdirAll(string(l), 0o755); err != nil { // #nosec G301 -- the test cluster's state directory; its keys are written 0600 (pki.go)
		return nil, err
	}
	unlock, err = flock.Lock(ctx, string(l)+".lock")
	if err != nil {
		return nil, err
	}
	if owner, err := os.ReadFile(l.owner()); err == nil {
		if strings.TrimSpace(string(owner)) == "detached" && anyRunning(l) {
			unlock()
			return nil, fmt.Errorf("a cluster started by make kube-up runs in %s; stop it first (make kube-down)", l)
		}
		log("kubecluster: clearing a cluster left behind in %s", l)
		if err := teardown(context.Background(), l, log); err != nil {
			unlock()
			return nil, fmt.Errorf("clearing the cluster left in %s: %w", l, err)
		}
	} else if err := teardown(context.Background(), l, log); err != nil {
		unlock()
		return nil, err
	}
	if busy := busyPorts(); len(busy) > 0 {
		unlock()
		return nil, fmt.Errorf("ports %s on 127.0.0.1 are taken by something else; is another Kubernetes running?", strings.Join(busy, ", "))
	}
	if err := os.MkdirAll(l.path("run"), 0o755); err != nil { // #nosec G301 -- the test cluster's PID files, which make kube-down reads
		unlock()
		return nil, err
	}
	owner := "pid " + strconv.Itoa(os.Getpid())
	if detach {
		owner = "detached"
	}
	// #nosec G306 -- which process owns the test cluster, read by the next one to claim it
	if err := os.WriteFile(l.owner(), []byte(owner+"\n"), 0o644); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// anyRunning reports whether a component of the cluster in l still runs.
func anyRunning(l layout) bool {
	for _, name := range componentNames {
		data, err := os.ReadFile(l.pidFile(name))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && ours(l, pid) {
			return true
		}
	}
	return false
}

// busyPorts lists the cluster's ports something already listens on.
func busyPorts() []string {
	var busy []string
	for _, p := range ports {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			busy = append(busy, strconv.Itoa(p))
			continue
		}
		_ = ln.Close()
	}
	return busy
}

// adminClient loads the admin kubeconfig.
func (c *Cluster) adminClient() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", c.Kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c.Config, c.Client = cfg, client
	return nil
}

// Stop tears the cluster down and leaves nothing behind: no process,
// mount, network namespace, link, iptables rule, cgroup or listener of
// its own, and no state directory. It is safe to call twice.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	start := time.Now()
	err := teardown(ctx, c.l, c.log)
	if c.unlock != nil {
		c.unlock()
	}
	c.log("kubecluster: down in %s", time.Since(start).Round(10*time.Millisecond))
	return err
}

// StopDir tears down the cluster whose state is in dir, whoever started
// it: make kube-down's way to stop make kube-up's cluster.
func StopDir(ctx context.Context, dir string, log func(format string, args ...any)) error {
	if log == nil {
		log = func(string, ...any) {}
	}
	l := layout(dir)
	unlock, err := flock.Lock(ctx, dir+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	return teardown(ctx, l, log)
}
