package kubecodegen

import (
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
	owner := o.secret("tok")
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
