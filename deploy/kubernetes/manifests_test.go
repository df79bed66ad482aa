package kubernetes

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/kubebox"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// access is one permission: API group, resource (with subresource) and
// verb.
type access struct{ group, resource, verb string }

// pluginCalls is every API call the kubectl_exec plugin makes, as the
// plugin itself declares them (kubebox.Calls; its tests run it with a
// user allowed exactly these).
var pluginCalls = func() []access {
	var out []access
	for _, c := range kubebox.Calls {
		out = append(out, access{"", c.Resource, c.Verb})
	}
	return out
}()

type manifests struct {
	deployments     []appsv1.Deployment
	serviceAccounts []corev1.ServiceAccount
	roles           []rbacv1.Role
	bindings        []rbacv1.RoleBinding
	configMaps      []corev1.ConfigMap
}

// load decodes every document of every manifest strictly: an unknown or
// misspelt field fails, as kubectl apply --validate=strict would.
func load(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var m manifests
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			var into any
			switch head.APIVersion + " " + head.Kind {
			case "apps/v1 Deployment":
				m.deployments = append(m.deployments, appsv1.Deployment{})
				into = &m.deployments[len(m.deployments)-1]
			case "v1 ServiceAccount":
				m.serviceAccounts = append(m.serviceAccounts, corev1.ServiceAccount{})
				into = &m.serviceAccounts[len(m.serviceAccounts)-1]
			case "rbac.authorization.k8s.io/v1 Role":
				m.roles = append(m.roles, rbacv1.Role{})
				into = &m.roles[len(m.roles)-1]
			case "rbac.authorization.k8s.io/v1 RoleBinding":
				m.bindings = append(m.bindings, rbacv1.RoleBinding{})
				into = &m.bindings[len(m.bindings)-1]
			case "v1 ConfigMap":
				m.configMaps = append(m.configMaps, corev1.ConfigMap{})
				into = &m.configMaps[len(m.configMaps)-1]
			default:
				t.Fatalf("%s document %d: unexpected %s %s", f, i, head.APIVersion, head.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, into); err != nil {
				t.Fatalf("%s document %d (%s): %v", f, i, head.Kind, err)
			}
		}
	}
	if len(m.deployments) != 1 || len(m.serviceAccounts) != 1 || len(m.roles) != 1 || len(m.bindings) != 1 || len(m.configMaps) != 1 {
		t.Fatalf("want one each of Deployment, ServiceAccount, Role, RoleBinding, ConfigMap; got %d, %d, %d, %d, %d",
			len(m.deployments), len(m.serviceAccounts), len(m.roles), len(m.bindings), len(m.configMaps))
	}
	return m
}

func TestRoleGrantsExactlyThePluginsCalls(t *testing.T) {
	m := load(t)
	var granted []access
	for _, r := range m.roles[0].Rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("rule %+v: resourceNames and nonResourceURLs are not used", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if g == "*" || res == "*" || v == "*" {
						t.Errorf("rule %+v: wildcards grant more than the plugin uses", r)
					}
					granted = append(granted, access{g, res, v})
				}
			}
		}
	}
	for _, c := range pluginCalls {
		if !slices.Contains(granted, c) {
			t.Errorf("the plugin's call %+v is not granted", c)
		}
	}
	for _, g := range granted {
		if !slices.Contains(pluginCalls, g) {
			t.Errorf("%+v is granted but the plugin never uses it", g)
		}
	}
}

func TestBindingAndDeploymentFitTogether(t *testing.T) {
	m := load(t)
	sa, role, rb, dep := m.serviceAccounts[0], m.roles[0], m.bindings[0], m.deployments[0]
	ns := sa.Namespace
	for what, got := range map[string]string{"Role": role.Namespace, "RoleBinding": rb.Namespace, "Deployment": dep.Namespace} {
		if got != ns || ns == "" {
			t.Errorf("%s namespace %q, ServiceAccount's %q", what, got, ns)
		}
	}
	if rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}) {
		t.Errorf("roleRef = %+v, want Role %s", rb.RoleRef, role.Name)
	}
	if len(rb.Subjects) != 1 || rb.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}) {
		t.Errorf("subjects = %+v, want ServiceAccount %s/%s", rb.Subjects, ns, sa.Name)
	}
	spec := dep.Spec.Template.Spec
	if spec.ServiceAccountName != sa.Name {
		t.Errorf("serviceAccountName = %q, want %q", spec.ServiceAccountName, sa.Name)
	}
	for k, v := range dep.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod template", k, v)
		}
	}
	containers := map[string]corev1.Container{}
	for _, c := range spec.Containers {
		containers[c.Name] = c
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
			!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("container %s: want no privilege escalation and all capabilities dropped", c.Name)
		}
	}
	agent, ok := containers["agent"]
	if !ok {
		t.Fatal("no agent container")
	}
	podName := false
	for _, e := range agent.Env {
		podName = podName || e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name"
	}
	if !podName {
		t.Error("the agent needs POD_NAME from metadata.name (the RuntimeConfig's pod: ${POD_NAME})")
	}
	hooks, ok := containers["hooks"]
	if !ok {
		t.Fatal("no hooks container")
	}
	if len(hooks.Command) == 0 || hooks.Command[0] != "/bin/sh" || hooks.Resources.Limits.Memory().IsZero() {
		t.Errorf("hooks sidecar: command %q, memory limit %v: want it idling under /bin/sh, with limits", hooks.Command, hooks.Resources.Limits.Memory())
	}
	if strings.Contains(strings.Join(hooks.Command, " "), "kubectl") {
		t.Error("the sidecar must not need kubectl")
	}
}

// TestRuntimeConfigFitsTheDeployment loads the ConfigMap's RuntimeConfig
// as the agent would (POD_NAME and POD_NAMESPACE from the downward API)
// and checks its sandbox against the plugin's own validation and the pod
// it targets.
func TestRuntimeConfigFitsTheDeployment(t *testing.T) {
	m := load(t)
	cm, dep := m.configMaps[0], m.deployments[0]
	env := map[string]string{}
	var agent, hooks *corev1.Container
	for i, c := range dep.Spec.Template.Spec.Containers {
		switch c.Name {
		case "agent":
			agent = &dep.Spec.Template.Spec.Containers[i]
		case "hooks":
			hooks = &dep.Spec.Template.Spec.Containers[i]
		}
	}
	if agent == nil || hooks == nil {
		t.Fatal("the Deployment needs an agent and a hooks container")
	}
	for _, e := range agent.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = map[string]string{"metadata.name": "promptkit-agent-7d9f-x2", "metadata.namespace": dep.Namespace}[e.ValueFrom.FieldRef.FieldPath]
		}
	}
	mounted := false
	for _, vm := range agent.VolumeMounts {
		for _, v := range dep.Spec.Template.Spec.Volumes {
			mounted = mounted || (v.Name == vm.Name && v.ConfigMap != nil && v.ConfigMap.Name == cm.Name && vm.MountPath == "/etc/promptkit")
		}
	}
	if !mounted {
		t.Errorf("ConfigMap %s is not mounted at /etc/promptkit in the agent", cm.Name)
	}
	modes := sandbox.NewRegistry()
	if err := modes.Register(kubebox.Mode, kubebox.Factory); err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse("/etc/promptkit/runtime.yaml", []byte(cm.Data["runtime.yaml"]), config.Options{
		Modes:     modes,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sandboxes) != 1 {
		t.Fatalf("want one sandbox, got %d", len(f.Sandboxes))
	}
	sb := f.Sandboxes[0]
	if err := kubebox.ValidateConfig(sb.Config); err != nil {
		t.Fatalf("sandbox %s: %v", sb.Name, err)
	}
	if sb.Config["pod"] != "promptkit-agent-7d9f-x2" || sb.Config["namespace"] != dep.Namespace || sb.Config["container"] != hooks.Name {
		t.Errorf("sandbox %s targets %v/%v/%v, not this pod's hooks container", sb.Name, sb.Config["namespace"], sb.Config["pod"], sb.Config["container"])
	}
	if _, ok := sb.Config["kubeconfig"]; ok {
		t.Error("in the pod the plugin uses its service account: no kubeconfig")
	}
}
