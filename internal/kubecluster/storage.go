package kubecluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The cluster has no dynamic provisioner (nothing to provision from, and
// no registry for a CSI driver's images): a test that needs claims bound
// provisions statically, as an administrator of a cluster without one
// would. LocalVolumes makes a StorageClass of its own with no
// provisioner and that many `local` PersistentVolumes, directories in
// the state directory (so a crashed test's go with the cluster). A
// local volume, unlike a hostPath one, gets the Pod's fsGroup, as the
// disks of a real provisioner do: a Pod running as a non-root user can
// write to it.

// LocalVolume is a PersistentVolume LocalVolumes made.
type LocalVolume struct {
	Name string // the PersistentVolume's
	Dir  string // its directory on the node (this host)
}

// LocalVolumes makes a StorageClass (WaitForFirstConsumer, no
// provisioner) and n local PersistentVolumes of size in it, and returns
// the class's name and the volumes. Call it before Namespace: its
// cleanup deletes the volumes, which cannot go while the claims bound to
// them exist, so it must run after the namespace's.
func (c *Cluster) LocalVolumes(t testing.TB, n int, size string) (class string, vols []LocalVolume) {
	t.Helper()
	var b [3]byte
	_, _ = rand.Read(b[:])
	class = "pks-local-" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := c.l.path("volumes", class)
	t.Cleanup(func() { c.removeLocalVolumes(t, class, vols, base) })
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: class},
		Provisioner:       "kubernetes.io/no-provisioner",
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimRetain),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if _, err := c.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating StorageClass %s: %v", class, err)
	}
	q := resource.MustParse(size)
	for i := range n {
		v := LocalVolume{Name: class + "-" + strconv.Itoa(i), Dir: c.l.path("volumes", class, strconv.Itoa(i))}
		if err := os.MkdirAll(v.Dir, 0o755); err != nil { // #nosec G301 -- the volume's root: the kubelet gives it to the Pod's fsGroup
			t.Fatal(err)
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: v.Name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: q},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              class,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: v.Dir}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName}}},
				}}}},
			},
		}
		if _, err := c.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating PersistentVolume %s: %v", v.Name, err)
		}
		vols = append(vols, v)
	}
	return class, vols
}

// removeLocalVolumes deletes the volumes, waiting until each is gone,
// then the class and the directories.
func (c *Cluster) removeLocalVolumes(t testing.TB, class string, vols []LocalVolume, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pvs := c.Client.CoreV1().PersistentVolumes()
	for _, v := range vols {
		if err := pvs.Delete(ctx, v.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting PersistentVolume %s: %v", v.Name, err)
			continue
		}
		err := waitFor(ctx, "PersistentVolume "+v.Name+" to go", func(ctx context.Context) error {
			pv, err := pvs.Get(ctx, v.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			} else if err != nil {
				return err
			}
			return fmt.Errorf("still there, %s (claim %v)", pv.Status.Phase, pv.Spec.ClaimRef)
		})
		if err != nil {
			t.Error(err)
		}
	}
	if err := c.Client.StorageV1().StorageClasses().Delete(ctx, class, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting StorageClass %s: %v", class, err)
	}
	if err := os.RemoveAll(base); err != nil {
		t.Error(err)
	}
}
