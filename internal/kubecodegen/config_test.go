package kubecodegen

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
)

func TestParseConfig(t *testing.T) {
	s, err := parseConfig(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if s.image != codegenimage.Image("") || s.network != NetworkNone || s.memory.String() != DefaultMemory ||
		s.cpus.String() != DefaultCPUs || s.workspaceSize.String() != DefaultWorkspaceSize || s.idle != DefaultIdleTimeout {
		t.Errorf("defaults: %+v", s)
	}
	for _, tc := range []struct {
		cfg  map[string]any
		says string
	}{
		{map[string]any{"network": "host"}, `key "network"`},
		{map[string]any{"memory": "lots"}, `key "memory"`},
		{map[string]any{"cpus": "-1"}, `key "cpus"`},
		{map[string]any{"namespace": "Not_A_Label"}, `key "namespace"`},
		{map[string]any{"workspace_pvc": "claim", "workspace_size": "1Gi"}, "exclude each other"},
		{map[string]any{"workspace_pvc": "claim", "storage_class": "fast"}, "exclude each other"},
		{map[string]any{"storage_class": "Not_A_Class"}, `key "storage_class"`},
		{map[string]any{"idle_timeout": "0s"}, `key "idle_timeout"`},
		{map[string]any{"on_idle": "sleep"}, `key "on_idle": want release (the default) or pause, got "sleep"`},
		{map[string]any{"no_such_key": 1}, "no_such_key"},
	} {
		if _, err := parseConfig(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v, want an error saying %q", tc.cfg, err, tc.says)
		}
	}
}

// TestObjects checks the promises the objects make: the Secret owns the
// rest, egress is denied, the Pod is hardened and gets no API token.
func TestObjects(t *testing.T) {
	set, err := parseConfig(map[string]any{"image": "img:1"})
	if err != nil {
		t.Fatal(err)
	}
	o := objects{id: "cg-1", name: "sandboxd-cg-1", ns: "ns", sandboxName: "code", set: set}
	owner := o.secret("tok", nil)
	owner.UID = types.UID("uid-1")
	if string(owner.Data[tokenKey]) != "tok" {
		t.Fatal("the Secret does not hold the token")
	}
	for _, m := range []metav1.ObjectMeta{o.networkPolicy(owner).ObjectMeta, o.service(owner).ObjectMeta, o.pod(owner).ObjectMeta} {
		if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].UID != "uid-1" || m.OwnerReferences[0].Kind != "Secret" || m.Labels[LabelID] != "cg-1" {
			t.Errorf("%s: owner %+v labels %v", m.Name, m.OwnerReferences, m.Labels)
		}
	}
	np := o.networkPolicy(owner)
	if len(np.Spec.PolicyTypes) != 2 || np.Spec.PolicyTypes[1] != networkingv1.PolicyTypeEgress || len(np.Spec.Egress) != 0 {
		t.Errorf("network none: %+v, want egress denied", np.Spec)
	}
	o.set.network = NetworkCluster
	if np := o.networkPolicy(owner); len(np.Spec.PolicyTypes) != 1 {
		t.Errorf("network cluster: %+v, want ingress only", np.Spec.PolicyTypes)
	}
	pod := o.pod(owner)
	c := pod.Spec.Containers[0]
	sc, psc := c.SecurityContext, pod.Spec.SecurityContext
	if *pod.Spec.AutomountServiceAccountToken || *pod.Spec.EnableServiceLinks || pod.Spec.RestartPolicy != corev1.RestartPolicyNever ||
		!*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" ||
		*psc.RunAsUser != codegenimage.UID || !*psc.RunAsNonRoot || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the Pod is not hardened: %+v %+v", pod.Spec, sc)
	}
	for _, e := range c.Env {
		if strings.Contains(strings.ToLower(e.Name), "token") {
			t.Errorf("the token is in the environment: %v", e)
		}
	}
	if strings.Contains(strings.Join(c.Args, " "), "tok") && !strings.Contains(strings.Join(c.Args, " "), "--token-file") {
		t.Errorf("the token is on the command line: %v", c.Args)
	}
	if len(o.service(owner).Spec.Ports) != 1 || len(np.Spec.Ingress[0].Ports) != 1 || strings.Contains(strings.Join(c.Args, " "), "--metrics-addr") {
		t.Errorf("metrics off: Service %+v, ingress %+v, args %v; want MCP's port alone", o.service(owner).Spec.Ports, np.Spec.Ingress, c.Args)
	}
	// With metrics, /metrics listens on the Pod's IP, and the Service and
	// the NetworkPolicy let its port in.
	o.set.metrics = true
	args := strings.Join(o.pod(owner).Spec.Containers[0].Args, " ")
	svc, in := o.service(owner).Spec.Ports, o.networkPolicy(owner).Spec.Ingress[0].Ports
	if !strings.Contains(args, "--metrics-addr $(POD_IP):7425") || len(svc) != 2 || svc[1].Port != MetricsPort ||
		len(in) != 2 || in[1].Port.IntVal != MetricsPort {
		t.Errorf("metrics on: args %s, Service %+v, ingress %+v", args, svc, in)
	}
}

// TestEgressObjects: egress rules need network none, and give the Pod
// the tunnel's port (admitted by the NetworkPolicy, fronted by the
// Service) and sandboxd its flags; the CA bundle goes in the Secret only
// when a rule adds a credential.
func TestEgressObjects(t *testing.T) {
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"egress": []any{map[string]any{"host": "proxy.golang.org"}}, "network": "cluster"},
			`config: key "egress": needs network: none (the proxy is the sandbox's one way out; with network cluster the namespace's policies would decide instead)`},
		{map[string]any{"egress": []any{map[string]any{"hots": "proxy.golang.org"}}},
			`config: key "egress": egress rule 0: unknown key "hots" (known: format, header, host, secret)`},
	} {
		if _, err := parseConfig(tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.cfg, err, tc.want)
		}
	}
	plain, err := parseConfig(map[string]any{"egress": []any{map[string]any{"host": "proxy.golang.org"}}})
	if err != nil {
		t.Fatal(err)
	}
	o := objects{id: "cg-1", name: "sandboxd-cg-1", ns: "ns", sandboxName: "code", set: plain}
	owner := o.secret("tok", nil)
	if _, ok := owner.Data[egressCAKey]; ok {
		t.Error("a Secret without a bundle holds one")
	}
	args := strings.Join(o.args(), " ")
	if !strings.Contains(args, "--egress-tunnel $(POD_IP):7426") || strings.Contains(args, "--egress-ca") {
		t.Errorf("sandboxd's args without a credential rule: %s", args)
	}
	var policyPorts, servicePorts []int32
	for _, p := range o.networkPolicy(owner).Spec.Ingress[0].Ports {
		policyPorts = append(policyPorts, p.Port.IntVal)
	}
	for _, p := range o.service(owner).Spec.Ports {
		servicePorts = append(servicePorts, p.Port)
	}
	if want := []int32{Port, 7426}; !slices.Equal(policyPorts, want) || !slices.Equal(servicePorts, want) {
		t.Errorf("ports: NetworkPolicy %v, Service %v, want %v", policyPorts, servicePorts, want)
	}
	if np := o.networkPolicy(owner); len(np.Spec.Egress) != 0 || len(np.Spec.PolicyTypes) != 2 {
		t.Errorf("egress rules opened the Pod's network: %+v", np.Spec)
	}
	o.set, err = parseConfig(map[string]any{"egress": []any{map[string]any{"host": "api.test", "secret": "T", "header": "Authorization"}}})
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(o.args(), " "); !strings.Contains(args, "--egress-ca "+tokenDir+"/egress-ca.pem") {
		t.Errorf("sandboxd's args with a credential rule: %s", args)
	}
	if s := o.secret("tok", []byte("PEM")); string(s.Data[egressCAKey]) != "PEM" {
		t.Errorf("the Secret's bundle: %q", s.Data[egressCAKey])
	}
}

// TestWorkspaceTmpfs: workspace_tmpfs makes the workspace an emptyDir
// in memory of that size, checked against the keys it excludes and the
// memory its pages count against.
func TestWorkspaceTmpfs(t *testing.T) {
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"workspace_tmpfs": "lots"}, `config: key "workspace_tmpfs": want a positive Kubernetes quantity`},
		{map[string]any{"workspace_tmpfs": "1Gi", "workspace_pvc": "claim"}, `config: keys "workspace_pvc" and "workspace_tmpfs" exclude each other`},
		{map[string]any{"workspace_tmpfs": "1Gi", "workspace_size": "1Gi"}, `config: keys "workspace_size" and "workspace_tmpfs" exclude each other`},
		{map[string]any{"workspace_tmpfs": "1Gi", "memory": "512Mi"}, `config: key "workspace_tmpfs": 1Gi is no less than memory (512Mi)`},
	} {
		if _, err := parseConfig(tc.cfg); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v:\n got %v\nwant %s...", tc.cfg, err, tc.want)
		}
	}
	set, err := parseConfig(map[string]any{"workspace_tmpfs": "64Mi"})
	if err != nil {
		t.Fatal(err)
	}
	o := objects{id: "cg-1", name: "sandboxd-cg-1", ns: "ns", sandboxName: "code", set: set}
	var ws *corev1.Volume
	for i, v := range o.pod(o.secret("tok", nil)).Spec.Volumes {
		if v.Name == "workspace" {
			ws = &o.pod(nil).Spec.Volumes[i]
		}
	}
	if ws == nil || ws.EmptyDir == nil || ws.EmptyDir.Medium != corev1.StorageMediumMemory || ws.EmptyDir.SizeLimit.String() != "64Mi" {
		t.Errorf("the workspace volume: %+v", ws)
	}
	if set.workspaceKind() != "tmpfs" {
		t.Errorf("workspaceKind %q", set.workspaceKind())
	}
}

// TestPidsLimitObjects: pids_limit gives sandboxd its flag and the Pod a
// user of its own, random on an emptyDir, and the same for the same
// claim, so that the next sandbox on it owns the files.
func TestPidsLimitObjects(t *testing.T) {
	if _, err := parseConfig(map[string]any{"pids_limit": 8}); err == nil || err.Error() != `config: key "pids_limit": want at least 64 processes and threads (sandboxd's own count), got 8` {
		t.Errorf("pids_limit 8: %v", err)
	}
	plain, err := parseConfig(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	o := objects{id: "cg-1", name: "sandboxd-cg-1", ns: "ns", sandboxName: "code", set: plain}
	if uid := *o.pod(nil).Spec.SecurityContext.RunAsUser; uid != codegenimage.UID || strings.Contains(strings.Join(o.args(), " "), "--pids-limit") {
		t.Errorf("without pids_limit: uid %d, args %v", uid, o.args())
	}
	o.set, err = parseConfig(map[string]any{"pids_limit": 256})
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(o.args(), " "); !strings.Contains(args, "--pids-limit 256") {
		t.Errorf("args: %s", args)
	}
	a, b := *o.pod(nil).Spec.SecurityContext.RunAsUser, *o.pod(nil).Spec.SecurityContext.RunAsUser
	if a == b || a < sandboxUIDBase || b < sandboxUIDBase || a >= 1<<31 || *o.pod(nil).Spec.SecurityContext.RunAsGroup != codegenimage.GID {
		t.Errorf("emptyDir sandboxes' users %d and %d: want two of their own, below 2^31, in the image's group", a, b)
	}
	o.set.workspacePVC = "claim"
	if a, b := *o.pod(nil).Spec.SecurityContext.RunAsUser, *o.pod(nil).Spec.SecurityContext.RunAsUser; a != b || a < sandboxUIDBase {
		t.Errorf("a claim's sandboxes' users %d and %d: want the same one", a, b)
	}
}
