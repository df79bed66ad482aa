package kubecodegen

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/egress"
	"github.com/altairalabs/promptkit-sandbox/internal/egresstunnel"
)

// Labels of a sandbox's objects.
const (
	LabelID        = "promptkit.altairalabs.ai/sandbox-id"
	LabelMode      = "promptkit.altairalabs.ai/mode"
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	appName        = "promptkit-sandboxd"
	managedBy      = "promptkit-sandbox-kubectl"
)

// containerName is the sandbox Pod's one container, sandboxd's.
const containerName = "sandboxd"

// Port is where sandboxd listens in its Pod, and the Service's port.
const Port = 7424

// MetricsPort is where sandboxd serves /metrics in its Pod (with
// metrics: true), and the Service's port for it.
const MetricsPort = 7425

// tokenKey is the Secret's key, and the file's name in tokenDir.
const (
	tokenKey = "token"
	tokenDir = codegenimage.RunDir
)

// tmpSize bounds /tmp: codegenimage.TmpfsSize ("1g", Docker's units)
// in Kubernetes' units.
var tmpSize = resource.MustParse("1Gi")

// podPrefix names every object of a sandbox: sandboxd-<id>.
const podPrefix = "sandboxd-"

// objects makes one sandbox's objects.
type objects struct {
	id, name, ns, sandboxName string
	set                       settings
}

func (o objects) labels() map[string]string {
	l := map[string]string{LabelID: o.id, LabelMode: Mode, LabelName: appName, LabelManagedBy: managedBy}
	if o.set.volume != "" {
		// On the Lease, it says the volume is attached (volume.go).
		l[LabelVolume] = o.set.volume
	}
	return l
}

func (o objects) selector() map[string]string { return map[string]string{LabelID: o.id} }

func (o objects) meta(owner *corev1.Secret) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: o.name, Namespace: o.ns, Labels: o.labels(),
		Annotations: map[string]string{"promptkit.altairalabs.ai/sandbox-name": o.sandboxName}}
	if owner != nil {
		m.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Secret", Name: owner.Name, UID: owner.UID,
		}}
	}
	return m
}

// secret holds the token, and the bundle the sandbox trusts when its
// egress proxy intercepts some hosts (nil: none); it owns the sandbox's
// other objects.
func (o objects) secret(token string, caBundle []byte) *corev1.Secret {
	data := map[string][]byte{tokenKey: []byte(token)}
	if caBundle != nil {
		data[egressCAKey] = caBundle
	}
	return &corev1.Secret{
		ObjectMeta: o.meta(nil),
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// networkPolicy admits ingress to sandboxd's port only and, with network
// none, denies all egress.
func (o objects) networkPolicy(owner *corev1.Secret) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	var ports []networkingv1.NetworkPolicyPort
	for _, p := range o.ports() {
		port := intstr.FromInt32(p.port)
		ports = append(ports, networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: &port})
	}
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: o.meta(owner),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: o.selector()},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{Ports: ports}},
		},
	}
	if o.set.network == NetworkNone {
		np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
	}
	return np
}

// podPort is a port sandboxd listens on in its Pod, and the Service's
// port of the same name and number.
type podPort struct {
	name string
	port int32
}

// ports are MCP's, /metrics' when asked for, and the egress tunnel's
// with egress rules.
func (o objects) ports() []podPort {
	ports := []podPort{{"mcp", Port}}
	if o.set.metrics {
		ports = append(ports, podPort{"metrics", MetricsPort})
	}
	if o.set.egress != nil {
		ports = append(ports, podPort{"egress", egresstunnel.Port})
	}
	return ports
}

func (o objects) servicePorts() []corev1.ServicePort {
	var out []corev1.ServicePort
	for _, p := range o.ports() {
		out = append(out, corev1.ServicePort{Name: p.name, Port: p.port, TargetPort: intstr.FromInt32(p.port), Protocol: corev1.ProtocolTCP})
	}
	return out
}

func (o objects) containerPorts() []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, p := range o.ports() {
		out = append(out, corev1.ContainerPort{Name: p.name, ContainerPort: p.port, Protocol: corev1.ProtocolTCP})
	}
	return out
}

// args are sandboxd's arguments. It refuses to listen beyond loopback
// without a token it was given: it has one, of 64 characters. /metrics
// takes no token: it says nothing of the agent's work but counts, and
// only what the NetworkPolicy lets in reaches it.
func (o objects) args() []string {
	args := []string{
		"--addr", "$(POD_IP):" + strconv.Itoa(Port),
		"--token-file", tokenDir + "/" + tokenKey,
		"--workspace", codegenimage.WorkspaceDir,
		"--log-format", "json",
	}
	if o.set.metrics {
		args = append(args, "--metrics-addr", "$(POD_IP):"+strconv.Itoa(MetricsPort))
	}
	args = append(args, o.pidsArgs()...)
	if o.set.egress != nil {
		args = append(args, "--egress-tunnel", "$(POD_IP):"+strconv.Itoa(egresstunnel.Port))
		if egress.Injects(o.set.egress) {
			args = append(args, "--egress-ca", tokenDir+"/"+egressCAKey)
		}
	}
	return args
}

// service fronts sandboxd's port for agents in the cluster.
func (o objects) service(owner *corev1.Secret) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: o.meta(owner),
		Spec: corev1.ServiceSpec{
			Selector: o.selector(),
			Ports:    o.servicePorts(),
		},
	}
}

// pod runs sandboxd under the image's hardening profile
// (internal/codegenimage), as docker_codegen's container does.
func (o objects) pod(owner *corev1.Secret) *corev1.Pod {
	uid, gid := o.runAsUser(), int64(codegenimage.GID)
	yes, no := true, false
	grace := int64(2)
	tokenMode := int32(0o440) // the group is fsGroup, sandboxd's
	workspace := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &o.set.workspaceSize}}
	if !o.set.workspaceTmpfs.IsZero() {
		// The kubelet mounts a memory-backed emptyDir as a tmpfs of its
		// sizeLimit: a write past it fails (ENOSPC), not the Pod.
		workspace = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &o.set.workspaceTmpfs}}
	}
	if claim := o.set.claimName(); claim != "" {
		workspace = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}
	}
	return &corev1.Pod{
		ObjectMeta: o.meta(owner),
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser: &uid, RunAsGroup: &gid, FSGroup: &gid, RunAsNonRoot: &yes,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            containerName,
				Image:           o.set.image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"sandboxd"},
				Args:            o.args(),
				Env: []corev1.EnvVar{
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
					{Name: "HOME", Value: codegenimage.TmpDir},
				},
				WorkingDir: codegenimage.WorkspaceDir,
				Ports:      o.containerPorts(),
				Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceMemory: o.set.memory, corev1.ResourceCPU: o.set.cpus},
				},
				SecurityContext: &corev1.SecurityContext{
					ReadOnlyRootFilesystem:   &yes,
					AllowPrivilegeEscalation: &no,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "token", MountPath: tokenDir, ReadOnly: true},
					{Name: "workspace", MountPath: codegenimage.WorkspaceDir},
					{Name: "tmp", MountPath: codegenimage.TmpDir},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: o.name, DefaultMode: &tokenMode}}},
				{Name: "workspace", VolumeSource: workspace},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(tmpSize)}}},
			},
		},
	}
}
