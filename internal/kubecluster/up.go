package kubecluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// componentNames are the processes of a cluster, in start order; teardown
// stops them in reverse.
var componentNames = []string{"containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kube-router"}

// up starts every component in order and waits for each to be usable.
func (c *Cluster) up(ctx context.Context, pause string) error {
	l := c.l
	if err := writePKI(l.path("pki"), apiserverServer); err != nil {
		return fmt.Errorf("writing the PKI: %w", err)
	}
	if err := writeConfigs(l, pause); err != nil {
		return err
	}
	if err := recordHost(l); err != nil {
		return err
	}
	if err := addForwardRule(); err != nil {
		return err
	}
	if err := setupBridge(); err != nil {
		return err
	}
	if err := c.start("containerd", "containerd", "--config", l.containerdConfig()); err != nil {
		return err
	}
	if err := waitFor(ctx, "containerd", c.ctrVersion); err != nil {
		return c.withLog("containerd", err)
	}
	if err := c.ImportImage(ctx, pause); err != nil {
		return err
	}
	if err := c.start("etcd", "etcd", etcdArgs(l)...); err != nil {
		return err
	}
	if err := c.start("kube-apiserver", c.Binaries.Path("kube-apiserver"), apiserverArgs(l)...); err != nil {
		return err
	}
	if err := c.adminClient(); err != nil {
		return err
	}
	if err := waitFor(ctx, "the apiserver's /readyz", c.ready); err != nil {
		return c.withLog("kube-apiserver", err)
	}
	for _, comp := range []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", controllerManagerArgs(l)},
		{"kube-scheduler", schedulerArgs(l)},
		{"kubelet", kubeletArgs(l)},
		{"kube-proxy", []string{"--config=" + l.proxyConfig()}},
	} {
		if err := c.start(comp.name, c.Binaries.Path(comp.name), comp.args...); err != nil {
			return err
		}
	}
	if err := waitFor(ctx, "node "+nodeName+" Ready", c.nodeReady); err != nil {
		return c.withLog("kubelet", err)
	}
	// kube-router exits when its node is not registered yet.
	if err := c.start("kube-router", c.Binaries.Path("kube-router"), kubeRouterArgs(l)...); err != nil {
		return err
	}
	// Policies are enforced once FORWARD jumps to its chain.
	if err := waitFor(ctx, "kube-router's FORWARD rule", func(context.Context) error {
		out, err := exec.Command("iptables", "-w", "5", "-S", "FORWARD").Output()
		if err != nil || !strings.Contains(string(out), "-j KUBE-ROUTER-FORWARD") {
			return fmt.Errorf("no jump to KUBE-ROUTER-FORWARD yet (%v)", err)
		}
		return nil
	}); err != nil {
		return c.withLog("kube-router", err)
	}
	// The service account controller makes "default" in each namespace;
	// until it has, pods cannot be created there.
	if err := waitFor(ctx, "the default service account", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return c.withLog("kube-controller-manager", err)
	}
	return c.allRunning()
}

// allRunning checks that no component has exited while the others came
// up (the waits above only ask the ones they need).
func (c *Cluster) allRunning() error {
	for _, name := range componentNames {
		data, err := os.ReadFile(c.l.pidFile(name))
		if err != nil {
			return fmt.Errorf("%s was never started: %w", name, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || !ours(c.l, pid) {
			return c.withLog(name, fmt.Errorf("%s has exited", name))
		}
	}
	return nil
}

// start starts a component and reaps it when it exits, so a stopped
// component never lingers as a zombie of this process.
func (c *Cluster) start(name, bin string, args ...string) error {
	cmd, err := startProcess(c.l, name, bin, args...)
	if err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// withLog adds the end of a component's log to err: where it says why.
func (c *Cluster) withLog(name string, err error) error {
	lines := c.logTail(name, 30, nil)
	return fmt.Errorf("%w\n--- last lines of %s:\n%s", err, c.l.log(name), strings.Join(lines, "\n"))
}

// logTail is the last n lines of a component's log that keep accepts
// (every line when keep is nil).
func (c *Cluster) logTail(name string, n int, keep func(string) bool) []string {
	data, _ := os.ReadFile(c.l.log(name))
	var lines []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if keep == nil || keep(line) {
			lines = append(lines, line)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

func (c *Cluster) ctrVersion(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "ctr", "--address", c.l.containerdSocket(), "version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr version: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (c *Cluster) ready(ctx context.Context) error {
	return c.Client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
}

func (c *Cluster) nodeReady(ctx context.Context) error {
	node, err := c.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			if cond.Status == corev1.ConditionTrue {
				return nil
			}
			return fmt.Errorf("node %s: %s", cond.Reason, cond.Message)
		}
	}
	return fmt.Errorf("node has no Ready condition yet")
}

func etcdArgs(l layout) []string {
	client := "http://127.0.0.1:" + strconv.Itoa(etcdClientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(etcdPeerPort)
	return []string{
		"--name", "default", "--data-dir", l.path("etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default=" + peer,
	}
}

// apiserverArgs: RBAC and the Node authorizer as a real cluster has them,
// TLS with our CA, on 127.0.0.1 only. --endpoint-reconciler-type=none:
// the apiserver's only address is loopback, which the "kubernetes"
// Service's endpoints may not carry.
func apiserverArgs(l layout) []string {
	p := l.pki
	return []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(etcdClientPort),
		"--bind-address=" + host, "--advertise-address=" + host, "--secure-port=" + strconv.Itoa(apiserverPort),
		"--tls-cert-file=" + p("apiserver.crt"), "--tls-private-key-file=" + p("apiserver.key"),
		"--client-ca-file=" + p("ca.crt"),
		"--service-account-key-file=" + p("sa.pub"), "--service-account-signing-key-file=" + p("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc." + clusterDomain,
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate=" + p("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + p("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority=" + p("ca.crt"),
		"--kubelet-preferred-address-types=Hostname",
		"--endpoint-reconciler-type=none", "--allow-privileged=true", "--profiling=false",
	}
}

func controllerManagerArgs(l layout) []string {
	p := l.pki
	kc := p("controller-manager.kubeconfig")
	return []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=" + host, "--secure-port=" + strconv.Itoa(controllerPort),
		"--leader-elect=false", "--use-service-account-credentials=true",
		"--service-account-private-key-file=" + p("sa.key"), "--root-ca-file=" + p("ca.crt"),
		"--cluster-signing-cert-file=" + p("ca.crt"), "--cluster-signing-key-file=" + p("ca.key"),
		"--profiling=false",
	}
}

func schedulerArgs(l layout) []string {
	kc := l.pki("scheduler.kubeconfig")
	return []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=" + host, "--secure-port=" + strconv.Itoa(schedulerPort),
		"--leader-elect=false", "--profiling=false",
	}
}

func kubeletArgs(l layout) []string {
	return []string{
		"--config=" + l.kubeletConfig(), "--kubeconfig=" + l.pki("kubelet.kubeconfig"),
		"--hostname-override=" + nodeName, "--root-dir=" + l.path("kubelet", "root"),
	}
}
