package codegen

import (
	"bytes"
	"os"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/altairalabs/promptkit-sandbox/internal/kubecodegen"
)

// TestRoleGrantsExactlyTheProvidersCalls: the Role is kubecodegen.Calls,
// no more and no less, with no wildcard.
func TestRoleGrantsExactlyTheProvidersCalls(t *testing.T) {
	data, err := os.ReadFile("rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.Role
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatal(err)
		}
		if head.Kind == "Role" {
			role = &rbacv1.Role{}
			if err := yaml.UnmarshalStrict(doc, role); err != nil {
				t.Fatal(err)
			}
		}
	}
	if role == nil {
		t.Fatal("no Role in rbac.yaml")
	}
	var granted, want []string
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if g == "*" || res == "*" || v == "*" || len(r.ResourceNames) > 0 {
						t.Errorf("rule %+v: wildcards or names", r)
					}
					granted = append(granted, g+"/"+res+" "+v)
				}
			}
		}
	}
	for _, c := range kubecodegen.Calls {
		want = append(want, c.Group+"/"+c.Resource+" "+c.Verb)
	}
	slices.Sort(granted)
	slices.Sort(want)
	if !slices.Equal(granted, want) {
		t.Errorf("the Role grants\n  %v\nthe provider calls\n  %v", granted, want)
	}
}
