package dockerbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
	"github.com/altairalabs/promptkit-sandbox/internal/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/internal/warmpool"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// Defaults applied when a key is absent.
const (
	DefaultNetwork   = networkNone
	DefaultPidsLimit = 256
	MaxPool          = warmpool.MaxSize
	DefaultWarm      = 2
)

// networkNone is the network mode with no network but loopback.
const networkNone = "none"

var (
	defaultCapDrop     = []string{"ALL"}
	defaultSecurityOpt = []string{"no-new-privileges"}
)

// Transports.
const (
	TransportAPI = "api"
	TransportCLI = "cli"
)

// RunKeys and ExecKeys are the configuration keys of each mode, in the
// order Describe reports them: those of runConfig and execConfig.
var (
	RunKeys  = sandbox.ConfigKeys(runConfig{})
	ExecKeys = sandbox.ConfigKeys(execConfig{})
)

// common holds what both modes share once validated.
type common struct {
	transport   string   // TransportAPI or TransportCLI
	dockerPath  string   // transport cli: the docker CLI
	extraArgs   []string // transport cli: inserted before the image or container
	env         []string // resolved KEY=value entries from the config's env
	timeout     time.Duration
	outputLimit int
}

// runConfig mirrors the docker_run keys; pointers tell an absent key from
// an explicit zero value.
type runConfig struct {
	Image       string            `json:"image"`
	Network     *string           `json:"network"`
	Mounts      []string          `json:"mounts"`
	ExtraArgs   []string          `json:"extra_args"`
	DockerPath  string            `json:"docker_path"`
	Env         []string          `json:"env"`
	User        string            `json:"user"`
	Workdir     string            `json:"workdir"`
	Memory      *flexString       `json:"memory"`
	CPUs        *flexString       `json:"cpus"`
	PidsLimit   *int64            `json:"pids_limit"`
	ReadOnly    bool              `json:"read_only"`
	Init        *bool             `json:"init"`
	CapDrop     *[]string         `json:"cap_drop"`
	CapAdd      []string          `json:"cap_add"`
	SecurityOpt *[]string         `json:"security_opt"`
	Transport   string            `json:"transport"`
	Pool        *int              `json:"pool"`
	Timeout     *sandbox.Duration `json:"timeout"`
	OutputLimit *int              `json:"output_limit"`
}

// execConfig mirrors the docker_exec keys.
type execConfig struct {
	Container   string            `json:"container"`
	Workdir     string            `json:"workdir"`
	User        string            `json:"user"`
	ExtraArgs   []string          `json:"extra_args"`
	DockerPath  string            `json:"docker_path"`
	Env         []string          `json:"env"`
	Transport   string            `json:"transport"`
	Warm        *int              `json:"warm"`
	Resident    *bool             `json:"resident"`
	Timeout     *sandbox.Duration `json:"timeout"`
	OutputLimit *int              `json:"output_limit"`
}

// runSettings is a validated docker_run configuration.
type runSettings struct {
	common
	pool        int // warm containers per command, 0 = none
	image       string
	network     string
	binds       []string
	user        string
	workdir     string
	memory      int64 // bytes, 0 = no limit
	nanoCPUs    int64 // 0 = no limit
	pidsLimit   int64 // -1 = no limit
	readOnly    bool
	init        bool // run the command under the engine's init
	capDrop     []string
	capAdd      []string
	securityOpt []string
}

// execSettings is a validated docker_exec configuration.
type execSettings struct {
	common
	warm      int  // warm execs per command
	resident  bool // run calls through a resident process (transport api)
	container string
	user      string
	workdir   string
}

// flexString accepts a YAML string or number ("256m", 0.5, 268435456) and
// keeps its text.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexString(s)
		return nil
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return fmt.Errorf("expected a string or a number, got %s", b)
	}
	*f = flexString(n.String())
	return nil
}

func keyErr(key, format string, args ...any) error {
	return fmt.Errorf("config: key %q: %s", key, fmt.Sprintf(format, args...))
}

func parseRunConfig(cfg map[string]any) (runSettings, error) {
	var c runConfig
	var s runSettings
	if err := sandbox.DecodeConfig(cfg, &c); err != nil {
		return s, err
	}
	var problems sandbox.Problems
	add := problems.Add
	if strings.TrimSpace(c.Image) == "" {
		add(errors.New(`config: key "image" is required (an image present in the local engine, e.g. "promptkit/pii-hook:1.2")`))
	}
	s.image = c.Image
	var err error
	s.common, err = parseCommon(c.Env, c.Timeout, c.OutputLimit, false)
	add(err)
	add(checkTransport(c.Transport, c.ExtraArgs))
	s.setTransport(c.Transport, c.DockerPath, c.ExtraArgs)
	if c.Pool != nil {
		switch v := *c.Pool; {
		case v < 0 || v > MaxPool:
			add(keyErr("pool", "must be between 0 (no pool) and %d warm containers, got %d", MaxPool, v))
		default:
			s.pool = v
		}
	}

	s.network = DefaultNetwork
	if c.Network != nil {
		if strings.TrimSpace(*c.Network) == "" {
			add(keyErr("network", "must not be empty (use \"none\" for no network)"))
		}
		s.network = *c.Network
	}
	for i, m := range c.Mounts {
		b, err := parseMount(m)
		if err != nil {
			add(fmt.Errorf("config: key \"mounts\": entry %d (%q): %v", i, m, err))
			continue
		}
		s.binds = append(s.binds, b)
	}
	s.user, s.workdir = c.User, c.Workdir
	if s.workdir != "" && !path.IsAbs(s.workdir) {
		add(keyErr("workdir", "must be an absolute path inside the container, got %q", s.workdir))
	}
	if c.Memory != nil {
		s.memory, err = parseMemory(string(*c.Memory))
		if err != nil {
			add(keyErr("memory", "%v", err))
		}
	}
	if c.CPUs != nil {
		s.nanoCPUs, err = parseCPUs(string(*c.CPUs))
		if err != nil {
			add(keyErr("cpus", "%v", err))
		}
	}
	s.pidsLimit = DefaultPidsLimit
	if c.PidsLimit != nil {
		switch v := *c.PidsLimit; {
		case v > 0:
			s.pidsLimit = v
		case v == -1:
			s.pidsLimit = -1
		default:
			add(keyErr("pids_limit", "must be a positive number of processes, or -1 for no limit; got %d", v))
		}
	}
	s.readOnly = c.ReadOnly
	s.init = c.Init == nil || *c.Init
	s.capDrop = defaultCapDrop
	if c.CapDrop != nil {
		s.capDrop = *c.CapDrop
	}
	s.capAdd = c.CapAdd
	for _, list := range []struct {
		key  string
		vals []string
	}{{"cap_drop", s.capDrop}, {"cap_add", s.capAdd}} {
		for _, v := range list.vals {
			if strings.TrimSpace(v) == "" || strings.ContainsAny(v, " \t") {
				add(keyErr(list.key, "invalid capability %q", v))
			}
		}
	}
	s.securityOpt = defaultSecurityOpt
	if c.SecurityOpt != nil {
		s.securityOpt = *c.SecurityOpt
	}
	if err := problems.Err(); err != nil {
		return s, err
	}
	return s, nil
}

func parseExecConfig(cfg map[string]any) (execSettings, error) {
	var c execConfig
	var s execSettings
	if err := sandbox.DecodeConfig(cfg, &c); err != nil {
		return s, err
	}
	var problems sandbox.Problems
	add := problems.Add
	if strings.TrimSpace(c.Container) == "" {
		add(errors.New(`config: key "container" is required (the name or ID of a running container)`))
	}
	s.container = c.Container
	var err error
	s.common, err = parseCommon(c.Env, c.Timeout, c.OutputLimit, true)
	add(err)
	add(checkTransport(c.Transport, c.ExtraArgs))
	s.setTransport(c.Transport, c.DockerPath, c.ExtraArgs)
	s.warm = DefaultWarm
	if c.Warm != nil {
		if v := *c.Warm; v < 0 || v > MaxPool {
			add(keyErr("warm", "must be between 0 (none) and %d warm execs, got %d", MaxPool, v))
		} else {
			s.warm = v
		}
	}
	s.resident = c.Resident == nil || *c.Resident
	s.user, s.workdir = c.User, c.Workdir
	if s.workdir != "" && !path.IsAbs(s.workdir) {
		add(keyErr("workdir", "must be an absolute path inside the container, got %q", s.workdir))
	}
	if err := problems.Err(); err != nil {
		return s, err
	}
	return s, nil
}

func parseCommon(env []string, timeout *sandbox.Duration, outputLimit *int, shellNames bool) (common, error) {
	var c common
	var problems sandbox.Problems
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		switch {
		case k == "":
			problems.Add(keyErr("env", "entry %q has no variable name", e))
		case shellNames:
			if err := remoteproc.CheckEnvName(k); err != nil {
				problems.Add(keyErr("env", "%v", err))
			}
		}
	}
	// Bare KEY entries forward the plugin's own environment, which is
	// the host's: the host starts the plugin.
	c.env = shell.MergeEnv(nil, env, os.LookupEnv)
	limits, err := sandbox.ParseLimits(timeout, outputLimit)
	c.timeout, c.outputLimit = limits.Timeout, limits.OutputLimit
	problems.Add(err)
	return c, problems.Err()
}

func (c *common) setTransport(transport, dockerPath string, extraArgs []string) {
	c.transport = TransportAPI
	if transport == TransportCLI {
		c.transport = TransportCLI
	}
	c.dockerPath, c.extraArgs = dockerPath, extraArgs
}

func checkTransport(transport string, extraArgs []string) error {
	switch transport {
	case "", TransportAPI:
		if len(extraArgs) > 0 {
			return keyErr("extra_args", "extra_args needs transport: cli (the api transport passes no docker CLI arguments)")
		}
		return nil
	case TransportCLI:
		return nil
	}
	return keyErr("transport", "unknown transport %q (want %q or %q)", transport, TransportAPI, TransportCLI)
}

// parseMount checks a "-v"-style spec, SRC:DST[:ro|rw], and returns it as
// an engine bind. SRC is an absolute host path or a named volume.
func parseMount(spec string) (string, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return "", errors.New("want SRC:DST or SRC:DST:ro")
	}
	src, dst := parts[0], parts[1]
	switch {
	case src == "":
		return "", errors.New("empty source")
	case path.IsAbs(src):
	case strings.HasPrefix(src, ".") || strings.Contains(src, "/"):
		return "", fmt.Errorf("relative host path %q: it must be resolved to an absolute path first (relative mounts resolve against the config file's directory)", src)
	default:
		// A named volume.
		for _, r := range src {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
				return "", fmt.Errorf("invalid volume name %q", src)
			}
		}
	}
	if !path.IsAbs(dst) {
		return "", fmt.Errorf("destination %q must be an absolute path inside the container", dst)
	}
	if len(parts) == 3 {
		switch parts[2] {
		case "ro", "rw":
		default:
			return "", fmt.Errorf("unknown option %q (want ro or rw)", parts[2])
		}
	}
	return spec, nil
}

// parseMemory reads a docker-style size: a number of bytes with an
// optional binary unit b, k, m or g ("256m", "1g", "1048576").
func parseMemory(s string) (int64, error) {
	n, err := bounded.ParseSize(s)
	if err != nil {
		return 0, err
	}
	const minMemory = 6 << 20 // the engine refuses less
	if n < minMemory {
		return 0, fmt.Errorf("size %q out of range (at least 6m)", s)
	}
	return n, nil
}

// parseCPUs reads a number of CPUs ("0.5", "2") as nano-CPUs.
func parseCPUs(s string) (int64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("invalid number of CPUs %q (want e.g. \"0.5\" or \"2\")", s)
	}
	if v <= 0 || v > 1<<20 {
		return 0, fmt.Errorf("number of CPUs %q out of range (must be greater than zero)", s)
	}
	return int64(v * 1e9), nil
}
