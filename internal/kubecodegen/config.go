package kubecodegen

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/egress"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Mode is the provider mode this package serves.
const Mode = "kubectl_codegen"

// Keys are kubectl_codegen's configuration keys, as Describe reports them.
var Keys = sandbox.ConfigKeys(config{})

// Defaults.
const (
	DefaultMemory        = "2Gi"
	DefaultCPUs          = "2"
	DefaultWorkspaceSize = "2Gi"
	DefaultIdleTimeout   = provision.DefaultIdleTimeout
)

// Networks: none denies the sandbox all egress; cluster leaves its
// egress to the namespace's own policies.
const (
	NetworkNone    = "none"
	NetworkCluster = "cluster"
)

// config mirrors the keys as written.
type config struct {
	Image         string            `json:"image"`
	Language      string            `json:"language"`
	Namespace     string            `json:"namespace"`
	Kubeconfig    string            `json:"kubeconfig"`
	Context       string            `json:"context"`
	WorkspacePVC  string            `json:"workspace_pvc"`
	WorkspaceSize string            `json:"workspace_size"`
	StorageClass  string            `json:"storage_class"`
	Network       string            `json:"network"`
	Memory        string            `json:"memory"`
	CPUs          string            `json:"cpus"`
	IdleTimeout   *sandbox.Duration `json:"idle_timeout"`
	OnIdle        string            `json:"on_idle"`
	Metrics       bool              `json:"metrics"`
	Warm          *int              `json:"warm"`
	Egress        any               `json:"egress"`
	// WorkspaceTmpfs is the size of a workspace kept in memory.
	WorkspaceTmpfs string `json:"workspace_tmpfs"`
	PidsLimit      *int64 `json:"pids_limit"`
}

// settings is a validated configuration.
type settings struct {
	image         string
	imageBy       string   // "image", "language" or "default": the image_by detail
	languages     []string // what the image serves, when the plugin named it
	namespace     string   // "" = the client configuration's
	kubeconfig    string
	context       string
	workspacePVC  string // "" = an emptyDir of workspaceSize
	workspaceSize resource.Quantity
	// workspaceTmpfs, when not zero, makes the workspace a memory-backed
	// emptyDir of this size: a tmpfs, which the kernel bounds.
	workspaceTmpfs resource.Quantity
	// volume is the workspace volume (ProvisionSpec.WorkspaceVolume): a
	// claim the provider makes of workspaceSize in storageClass ("" =
	// the cluster's default) and keeps (volume.go). Not a key: each
	// Provision names its own.
	volume       string
	storageClass string
	network      string
	memory       resource.Quantity
	cpus         resource.Quantity
	idle         time.Duration
	// sleepIdle: on_idle: pause. An idle sandbox on a claim has its Pod
	// deleted until its next call (pause.go); one on an emptyDir, whose
	// files would go with the Pod, is released as without it.
	sleepIdle bool
	metrics   bool // sandboxd serves /metrics, forwarded like MCP
	warm      int  // sandboxes kept started for Provisions (pool.go)
	// egress is what the sandbox may reach through its proxy
	// (egress.go); nil: nothing.
	egress []egress.Rule
	// pidsLimit, when not zero, holds the sandbox's user to that many
	// tasks, under a user of its own (pids.go).
	pidsLimit int64
}

func keyErr(key, format string, args ...any) error {
	return fmt.Errorf("config: key %q: %s", key, fmt.Sprintf(format, args...))
}

func parseConfig(cfg map[string]any) (settings, error) {
	var c config
	if err := sandbox.DecodeConfig(cfg, &c); err != nil {
		return settings{}, err
	}
	var problems sandbox.Problems
	add := problems.Add
	s := settings{
		image: c.Image, namespace: c.Namespace, kubeconfig: c.Kubeconfig, context: c.Context,
		workspacePVC: c.WorkspacePVC, storageClass: c.StorageClass, network: c.Network, metrics: c.Metrics,
	}
	// The workspace is in the cluster, where the plugin cannot look
	// for language markers: the language key names the image, or the
	// default image serves.
	s.imageBy, s.languages = "image", nil
	switch {
	case strings.TrimSpace(s.image) != "" && c.Language != "":
		add(errors.New(`config: keys "image" and "language" exclude each other (an image serves the languages it was built for)`))
	case strings.TrimSpace(s.image) != "":
	case c.Language != "":
		langs, err := codegenimage.ParseLanguages(c.Language)
		if err != nil {
			add(keyErr("language", "%v", err))
		}
		s.image, s.imageBy, s.languages = codegenimage.ImageFor("", langs...), "language", langs
	default:
		s.image, s.imageBy, s.languages = codegenimage.Image(""), "default", []string{codegenimage.DefaultLanguage}
	}
	if s.namespace != "" {
		for _, msg := range validation.IsDNS1123Label(s.namespace) {
			add(keyErr("namespace", "%q: %s", s.namespace, msg))
		}
	}
	if s.workspacePVC != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.workspacePVC) {
			add(keyErr("workspace_pvc", "%q: %s", s.workspacePVC, msg))
		}
	}
	if s.storageClass != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.storageClass) {
			add(keyErr("storage_class", "%q: %s", s.storageClass, msg))
		}
		if s.workspacePVC != "" {
			add(errors.New(`config: keys "workspace_pvc" and "storage_class" exclude each other (a claim has its own class)`))
		}
	}
	quantity := func(key, v, def string, into *resource.Quantity) {
		if v == "" {
			v = def
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() <= 0 {
			add(keyErr(key, "want a positive Kubernetes quantity such as %q, got %q", def, v))
			return
		}
		*into = q
	}
	quantity("memory", c.Memory, DefaultMemory, &s.memory)
	quantity("cpus", c.CPUs, DefaultCPUs, &s.cpus)
	quantity("workspace_size", c.WorkspaceSize, DefaultWorkspaceSize, &s.workspaceSize)
	if c.WorkspaceTmpfs != "" {
		quantity("workspace_tmpfs", c.WorkspaceTmpfs, "1Gi", &s.workspaceTmpfs)
		switch {
		case s.workspacePVC != "":
			add(errors.New(`config: keys "workspace_pvc" and "workspace_tmpfs" exclude each other (a claim is on disk; the tmpfs is the workspace)`))
		case c.WorkspaceSize != "":
			add(errors.New(`config: keys "workspace_size" and "workspace_tmpfs" exclude each other (the tmpfs's size is the workspace's)`))
		case s.workspaceTmpfs.Cmp(s.memory) >= 0:
			add(keyErr("workspace_tmpfs", "%s is no less than memory (%s), which the tmpfs's pages count against", s.workspaceTmpfs.String(), s.memory.String()))
		}
	}
	if s.workspacePVC != "" && c.WorkspaceSize != "" {
		add(errors.New(`config: keys "workspace_pvc" and "workspace_size" exclude each other (a claim has its own size)`))
	}
	switch s.network {
	case "":
		s.network = NetworkNone
	case NetworkNone, NetworkCluster:
	default:
		add(keyErr("network", "want %q (no egress at all, the default) or %q (the namespace's own policies), got %q", NetworkNone, NetworkCluster, s.network))
	}
	if c.PidsLimit != nil {
		if s.pidsLimit = *c.PidsLimit; s.pidsLimit < minPidsLimit {
			add(keyErr("pids_limit", "want at least %d processes and threads (sandboxd's own count), got %d", minPidsLimit, s.pidsLimit))
		}
	}
	var err error
	if c.Egress != nil {
		if s.egress, err = egress.ParseRules(c.Egress); err != nil {
			add(keyErr("egress", "%v", err))
		} else if s.network != NetworkNone {
			add(keyErr("egress", "needs network: %s (the proxy is the sandbox's one way out; with network %s the namespace's policies would decide instead)", NetworkNone, s.network))
		}
	}
	if s.idle, err = provision.IdleTimeout(c.IdleTimeout); err != nil {
		add(keyErr("idle_timeout", "%v", err))
	}
	if s.sleepIdle, err = provision.OnIdle(c.OnIdle); err != nil {
		add(keyErr("on_idle", "%v", err))
	}
	if c.Warm != nil {
		if s.warm = *c.Warm; s.warm < 0 || s.warm > MaxWarm {
			add(keyErr("warm", "must be between 0 (no pool) and %d sandboxes kept started, got %d", MaxWarm, s.warm))
		}
	}
	return s, problems.Err()
}

// workspaceKind says what the workspace is, as a provisioned sandbox's
// Workspace: a claim, an emptyDir, or an emptyDir in memory.
func (s settings) workspaceKind() string {
	switch {
	case s.workspacePVC != "":
		return "pvc:" + s.workspacePVC
	case !s.workspaceTmpfs.IsZero():
		return "tmpfs"
	}
	return "emptyDir"
}
