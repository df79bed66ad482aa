package kubecluster

import (
	"context"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testNetworkPolicy proves NetworkPolicy is enforced: a pod reaches
// another pod's port, then cannot once a policy denies its egress, and
// can again when the policy goes.
func testNetworkPolicy(t *testing.T, c *Cluster) {
	ns := c.Namespace(t)
	web := c.RunPod(t, hooksPod(c, t, ns, "web", webCommand...))
	client := c.RunPod(t, hooksPod(c, t, ns, "client"))
	reach := func() error {
		_, err := fetch(c, ns, client.Name, web.Status.PodIP, 8080)
		return err
	}
	if err := reach(); err != nil {
		t.Fatalf("before any policy, the client cannot reach the web pod: %v", err)
	}

	policies := c.Client.NetworkingV1().NetworkPolicies(ns)
	deny := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-egress"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "client"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		},
	}
	ctx := context.Background()
	if _, err := policies.Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// kube-router applies a policy within a moment of its creation.
	if err := until(20*time.Second, func() bool { return reach() != nil }); err != nil {
		t.Fatalf("with egress denied, the client still reaches the web pod after %v", err)
	}
	// ...and the denial holds: not a blip.
	for range 3 {
		if err := reach(); err == nil {
			t.Fatal("with egress denied, the client reached the web pod")
		}
	}

	if err := policies.Delete(ctx, deny.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := until(20*time.Second, func() bool { return reach() == nil }); err != nil {
		t.Fatalf("with the policy gone, the client still cannot reach the web pod after %v: %v", err, reach())
	}
}

// until polls cond until it holds, or returns how long it waited.
func until(d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return errTimeout(d)
		}
		time.Sleep(300 * time.Millisecond)
	}
	return nil
}

type errTimeout time.Duration

func (e errTimeout) Error() string { return time.Duration(e).String() }
