package kubebox

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/altairalabs/promptkit-sandbox/internal/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// Mode is the mode this backend serves.
const Mode = "kubectl_exec"

// Transports.
const (
	TransportNative = "native"
	TransportCLI    = "cli"
)

// Keys are the configuration keys of kubectl_exec, in the order Describe
// reports them: those of config.
var Keys = sandbox.ConfigKeys(config{})

// DefaultWarm is how many exec sessions a sandbox keeps open ahead of its
// calls unless warm says otherwise, and MaxWarm the most it may.
const (
	DefaultWarm = 2
	MaxWarm     = warmpool.MaxSize
)

// config mirrors the keys as written.
type config struct {
	Pod         string            `json:"pod"`
	Selector    string            `json:"selector"`
	Namespace   string            `json:"namespace"`
	Container   string            `json:"container"`
	Kubeconfig  string            `json:"kubeconfig"`
	Context     string            `json:"context"`
	Env         []string          `json:"env"`
	Transport   string            `json:"transport"`
	KubectlPath string            `json:"kubectl_path"`
	ExtraArgs   []string          `json:"extra_args"`
	Warm        *int              `json:"warm"`
	Resident    *bool             `json:"resident"`
	Timeout     *sandbox.Duration `json:"timeout"`
	OutputLimit *int              `json:"output_limit"`
}

// settings is a validated kubectl_exec configuration.
type settings struct {
	pod         string
	selector    labels.Selector // nil when pod is set
	namespace   string          // "" = the kubeconfig's
	container   string
	kubeconfig  string
	context     string
	env         []string // resolved KEY=value entries
	transport   string
	kubectlPath string
	extraArgs   []string
	warm        int  // exec sessions kept open ahead of calls
	resident    bool // run calls through a resident (transport native)
	timeout     time.Duration
	outputLimit int
}

func keyErr(key, format string, args ...any) error {
	return fmt.Errorf("config: key %q: %s", key, fmt.Sprintf(format, args...))
}

// ValidateConfig checks a kubectl_exec configuration (a spec.sandboxes
// entry's keys other than mode) without reaching any cluster.
func ValidateConfig(cfg map[string]any) error {
	_, err := parseConfig(cfg)
	return err
}

// parseConfig validates cfg; every problem is reported, not only the
// first.
func parseConfig(cfg map[string]any) (settings, error) {
	var c config
	var s settings
	if err := sandbox.DecodeConfig(cfg, &c); err != nil {
		return s, err
	}
	var problems sandbox.Problems
	add := problems.Add
	switch {
	case c.Pod == "" && c.Selector == "":
		add(errors.New(`config: key "pod" is required unless "selector" is given (e.g. pod: ${POD_NAME}, or selector: app=hooks)`))
	case c.Pod != "" && c.Selector != "":
		add(errors.New(`config: keys "pod" and "selector" exclude each other: set one`))
	case c.Pod != "":
		add(dnsName("pod", c.Pod, validation.IsDNS1123Subdomain))
		s.pod = c.Pod
	default:
		sel, err := labels.Parse(c.Selector)
		switch {
		case err != nil:
			add(keyErr("selector", "invalid label selector %q: %v", c.Selector, err))
		case sel.Empty():
			add(keyErr("selector", "%q selects every pod: name the labels of the hooks pod", c.Selector))
		default:
			s.selector = sel
		}
	}
	if c.Namespace != "" {
		add(dnsName("namespace", c.Namespace, validation.IsDNS1123Label))
	}
	if c.Container != "" {
		add(dnsName("container", c.Container, validation.IsDNS1123Label))
	}
	s.namespace, s.container, s.kubeconfig, s.context = c.Namespace, c.Container, c.Kubeconfig, c.Context

	for _, e := range c.Env {
		if k, _, _ := strings.Cut(e, "="); k == "" {
			add(keyErr("env", "entry %q has no variable name", e))
		} else if err := remoteproc.CheckEnvName(k); err != nil {
			add(keyErr("env", "%v", err))
		}
	}
	// Bare KEY entries forward the plugin's environment, which is the
	// host's: the host starts the plugin.
	s.env = shell.MergeEnv(nil, c.Env, os.LookupEnv)

	switch c.Transport {
	case "", TransportNative:
		s.transport = TransportNative
		if len(c.ExtraArgs) > 0 {
			add(keyErr("extra_args", "extra_args needs transport: cli (the native transport runs no kubectl)"))
		}
	case TransportCLI:
		s.transport = TransportCLI
	default:
		add(keyErr("transport", "unknown transport %q (want %q or %q)", c.Transport, TransportNative, TransportCLI))
	}
	s.kubectlPath, s.extraArgs = c.KubectlPath, c.ExtraArgs
	if s.kubectlPath == "" {
		s.kubectlPath = "kubectl"
	}

	s.resident = c.Resident == nil || *c.Resident
	s.warm = DefaultWarm
	if c.Warm != nil {
		if v := *c.Warm; v < 0 || v > MaxWarm {
			add(keyErr("warm", "must be between 0 (none) and %d exec sessions, got %d", MaxWarm, v))
		} else {
			s.warm = v
		}
	}

	limits, err := sandbox.ParseLimits(c.Timeout, c.OutputLimit)
	add(err)
	s.timeout, s.outputLimit = limits.Timeout, limits.OutputLimit
	return s, problems.Err()
}

// dnsName checks a Kubernetes object name with the API server's own rule.
func dnsName(key, v string, check func(string) []string) error {
	if msgs := check(v); len(msgs) > 0 {
		return keyErr(key, "invalid name %q: %s", v, strings.Join(msgs, "; "))
	}
	return nil
}
