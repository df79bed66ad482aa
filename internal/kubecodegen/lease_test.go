package kubecodegen

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestLeaseExpiry(t *testing.T) {
	now := time.Now()
	at := func(ago time.Duration, secs int32) coordinationv1.Lease {
		t := metav1.NewMicroTime(now.Add(-ago))
		return coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &t, LeaseDurationSeconds: ptr.To(secs)}}
	}
	for _, tc := range []struct {
		name  string
		lease coordinationv1.Lease
		want  bool
	}{
		{"renewed within its duration", at(10*time.Second, 60), false},
		{"renewed longer ago", at(61*time.Second, 60), true},
		{"no renewal time", coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To(int32(1))}}, false},
		{"no duration", coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: ptr.To(metav1.NewMicroTime(now.Add(-time.Hour)))}}, false},
	} {
		if got := expired(tc.lease, now); got != tc.want {
			t.Errorf("%s: expired = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The sweep deletes only the Secret a Lease names as its owner, of this
// provider's names: a Lease someone else made points it nowhere else.
func TestLeaseOwner(t *testing.T) {
	secret := metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: "sandboxd-cg-1", UID: "u1"}
	for _, tc := range []struct {
		name, lease string
		refs        []metav1.OwnerReference
		want        bool
	}{
		{"its own Secret", "sandboxd-cg-1", []metav1.OwnerReference{secret}, true},
		{"another name than the Lease's", "sandboxd-cg-2", []metav1.OwnerReference{secret}, false},
		{"not one of ours", "db-password", []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "db-password", UID: "u"}}, false},
		{"not a Secret", "sandboxd-cg-1", []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "sandboxd-cg-1", UID: "u"}}, false},
		{"no UID", "sandboxd-cg-1", []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "sandboxd-cg-1"}}, false},
		{"no owner", "sandboxd-cg-1", nil, false},
	} {
		l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: tc.lease, OwnerReferences: tc.refs}}
		if _, got := ownerSecret(l); got != tc.want {
			t.Errorf("%s: owner found = %v, want %v", tc.name, got, tc.want)
		}
	}
}
