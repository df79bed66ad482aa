package dockerbox

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/egress"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/tracing"
)

// CodegenMode is the provider mode of a sandboxd container per sandbox:
// Provision hands out its MCP endpoint (see codegen.go).
const CodegenMode = "docker_codegen"

// CodegenKeys are docker_codegen's configuration keys, as Describe
// reports them.
var CodegenKeys = sandbox.ConfigKeys(codegenConfig{})

// Hardening is how a codegen container runs: the user, filesystem,
// capabilities and limits, and where sandboxd finds its socket directory
// and workspace. DefaultHardening holds the values the sandboxd image
// (promptkit/sandboxd, built by make sandboxd-image) is made for; the
// image's build is the authority on them, so when it changes them this
// is the one place to follow.
type Hardening struct {
	// User is the default UID:GID sandboxd runs as: the image's
	// unprivileged user. (A workspace owned by a user other than root
	// is served as its owner instead; see codegenSettings.user.)
	User string
	// Entrypoint starts sandboxd; Args follow it (see sandboxdArgs).
	Entrypoint []string
	// ReadOnlyRootfs makes the image's filesystem read-only; Tmpfs
	// mounts writable scratch space (target -> mount options).
	ReadOnlyRootfs bool
	Tmpfs          map[string]string
	CapDrop        []string
	SecurityOpt    []string
	PidsLimit      int64
	// Env is the container's environment: a HOME on the tmpfs, since the
	// root filesystem is read-only and tools (git, go) want one.
	Env []string
	// SocketDir is where the private host directory (token, socket) is
	// mounted; WorkspaceDir is where the workspace is.
	SocketDir    string
	WorkspaceDir string
}

// DefaultHardening is the sandboxd image's run profile
// (internal/codegenimage, which the image's build follows too): uid 65532,
// read-only root, a tmpfs /tmp, no capabilities, no-new-privileges and a
// pids limit.
//
// /tmp is mounted exec: go test runs the binaries it builds there, and
// the engine's tmpfs default is noexec.
var DefaultHardening = Hardening{
	User:           codegenimage.User,
	Entrypoint:     []string{"sandboxd"},
	ReadOnlyRootfs: true,
	Tmpfs:          map[string]string{codegenimage.TmpDir: "rw,exec,nosuid,nodev,size=" + codegenimage.TmpfsSize + ",mode=1777"},
	CapDrop:        []string{"ALL"},
	SecurityOpt:    []string{"no-new-privileges"},
	PidsLimit:      codegenimage.PidsLimit,
	Env:            []string{"HOME=" + codegenimage.TmpDir},
	SocketDir:      codegenimage.RunDir,
	WorkspaceDir:   codegenimage.WorkspaceDir,
}

// Names inside SocketDir.
var (
	socketName = path.Base(codegenimage.SocketPath)
	tokenName  = path.Base(codegenimage.TokenPath)
)

// Names inside SocketDir of the sockets the operations use: sandboxd's
// metrics listener, and the relay its spans go out by (a container
// without a network reaches no collector itself).
const (
	metricsSocketName = "metrics.sock"
	otlpSocketName    = "otlp.sock"
)

// sandboxdArgs is sandboxd's command line: the socket and token in the
// mounted private directory, the workspace, and the stdin lifeline that
// stops it when the plugin dies (see codegenContainer.attach); with
// metrics, its metrics socket there too; with traces, the relay's.
func (h Hardening) sandboxdArgs(metrics, traces bool) []string {
	args := []string{
		"--addr", "unix:" + h.SocketDir + "/" + socketName,
		"--token-file", h.SocketDir + "/" + tokenName,
		"--workspace", h.WorkspaceDir,
		"--exit-on-stdin-eof",
		"--log-format", "json",
	}
	if metrics {
		args = append(args, "--metrics-addr", "unix:"+h.SocketDir+"/"+metricsSocketName)
	}
	if traces {
		args = append(args, "--otlp-endpoint", tracing.UnixScheme+h.SocketDir+"/"+otlpSocketName)
	}
	return args
}

// DefaultIdleTimeout reaps a codegen sandbox nothing has been connected
// to for this long.
const DefaultIdleTimeout = provision.DefaultIdleTimeout

// codegenConfig mirrors the docker_codegen keys.
type codegenConfig struct {
	Image       string            `json:"image"`
	Language    string            `json:"language"`
	Workspace   string            `json:"workspace"`
	Network     *string           `json:"network"`
	Memory      *flexString       `json:"memory"`
	CPUs        *flexString       `json:"cpus"`
	PidsLimit   *int64            `json:"pids_limit"`
	User        string            `json:"user"`
	IdleTimeout *sandbox.Duration `json:"idle_timeout"`
	Metrics     bool              `json:"metrics"`
	Cache       *string           `json:"cache"`
	Warm        *int              `json:"warm"`
	OnIdle      string            `json:"on_idle"`
	Egress      any               `json:"egress"`
	// WorkspaceTmpfs is the size of a workspace kept in memory.
	WorkspaceTmpfs *flexString `json:"workspace_tmpfs"`
}

// codegenSettings is a validated docker_codegen configuration.
type codegenSettings struct {
	image     string   // "" = chosen by language or the workspace (chooseImage)
	languages []string // the language key's, in codegenimage's order
	workspace string   // absolute host path; "" = the provider makes one
	network   string
	memory    int64
	nanoCPUs  int64
	pidsLimit int64
	uid, gid  int // -1: decided from the workspace (see resolveUser)
	idle      time.Duration
	metrics   bool          // serve sandboxd's /metrics on a loopback port
	cache     string        // cacheWorkspace, cacheSandbox or cacheNone
	warm      int           // sandboxes kept started for Provisions (codegen_pool.go)
	sleepIdle bool          // on_idle: pause: idle_timeout pauses the sandbox until its next call
	seed      string        // a host directory (or a volume) the provider-made workspace starts as a copy of (a fork's)
	volume    string        // a workspace volume mounted instead of a host directory (codegen_volume.go)
	egress    []egress.Rule // what the sandbox may reach through its proxy (codegen_egress.go); nil: nothing
	tmpfs     int64         // bytes of a workspace kept in a tmpfs instead of a host directory; 0: none (codegen_tmpfs.go)
}

func parseCodegenConfig(cfg map[string]any, h Hardening) (codegenSettings, error) {
	var c codegenConfig
	s := codegenSettings{uid: -1, gid: -1}
	if err := sandbox.DecodeConfig(cfg, &c); err != nil {
		return s, err
	}
	var problems sandbox.Problems
	add := problems.Add
	if c.Image != "" && strings.TrimSpace(c.Image) == "" {
		add(keyErr("image", "must not be blank (leave it out to choose the image by language)"))
	}
	s.image = strings.TrimSpace(c.Image)
	if c.Language != "" {
		var err error
		if s.languages, err = codegenimage.ParseLanguages(c.Language); err != nil {
			add(keyErr("language", "%v", err))
		}
		if s.image != "" {
			add(errors.New(`config: keys "image" and "language" exclude each other (an image serves the languages it was built for)`))
		}
	}
	if rest, ok := strings.CutPrefix(c.Workspace, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			c.Workspace = filepath.Join(home, rest)
		}
	}
	if c.Workspace != "" {
		if !filepath.IsAbs(c.Workspace) {
			add(keyErr("workspace", "must be an absolute path (relative ones resolve against the config file's directory), got %q", c.Workspace))
		}
		s.workspace = filepath.Clean(c.Workspace)
	}
	s.network = DefaultNetwork
	if c.Network != nil {
		if strings.TrimSpace(*c.Network) == "" {
			add(keyErr("network", "must not be empty (use \"none\" for no network)"))
		}
		s.network = *c.Network
	}
	var err error
	if c.Memory != nil {
		if s.memory, err = parseMemory(string(*c.Memory)); err != nil {
			add(keyErr("memory", "%v", err))
		}
	}
	if c.CPUs != nil {
		if s.nanoCPUs, err = parseCPUs(string(*c.CPUs)); err != nil {
			add(keyErr("cpus", "%v", err))
		}
	}
	s.pidsLimit = h.PidsLimit
	if c.PidsLimit != nil {
		if v := *c.PidsLimit; v > 0 {
			s.pidsLimit = v
		} else {
			add(keyErr("pids_limit", "must be a positive number of processes, got %d", v))
		}
	}
	if c.User != "" {
		if s.uid, s.gid, err = parseNumericUser(c.User); err != nil {
			add(keyErr("user", "%v", err))
		}
	}
	if s.idle, err = provision.IdleTimeout(c.IdleTimeout); err != nil {
		add(keyErr("idle_timeout", "%v", err))
	}
	s.metrics = c.Metrics
	s.cache = cacheWorkspace
	if c.Cache != nil {
		if s.cache = *c.Cache; !slices.Contains(cacheValues, s.cache) {
			add(keyErr("cache", "want one of %s (where the Go build and module caches live), got %q", strings.Join(cacheValues, ", "), s.cache))
		}
	}
	if s.sleepIdle, err = provision.OnIdle(c.OnIdle); err != nil {
		add(keyErr("on_idle", "%v", err))
	}
	if c.Egress != nil {
		if s.egress, err = egress.ParseRules(c.Egress); err != nil {
			add(keyErr("egress", "%v", err))
		} else if s.network != networkNone {
			add(keyErr("egress", "needs network: %s (the proxy is the sandbox's one way out; with network %s the rules would hold nothing back)", networkNone, s.network))
		}
	}
	if c.WorkspaceTmpfs != nil {
		if s.tmpfs, err = parseWorkspaceTmpfs(string(*c.WorkspaceTmpfs), s.workspace, s.memory); err != nil {
			add(keyErr("workspace_tmpfs", "%v", err))
		}
	}
	if c.Warm != nil {
		if s.warm = *c.Warm; s.warm < 0 || s.warm > MaxCodegenWarm {
			add(keyErr("warm", "must be between 0 (no pool) and %d sandboxes kept started, got %d", MaxCodegenWarm, s.warm))
		}
	}
	return s, problems.Err()
}

// parseNumericUser reads "UID" or "UID:GID". Names are refused: the
// plugin chowns the private directory to the user, on the host, where
// the image's names mean nothing.
func parseNumericUser(v string) (uid, gid int, err error) {
	u, g, hasGroup := strings.Cut(v, ":")
	uid, err = strconv.Atoi(u)
	if err != nil || uid < 0 {
		return 0, 0, fmt.Errorf("want a numeric UID or UID:GID (the plugin chowns the token to it on the host), got %q", v)
	}
	gid = uid
	if hasGroup {
		if gid, err = strconv.Atoi(g); err != nil || gid < 0 {
			return 0, 0, fmt.Errorf("want a numeric UID or UID:GID, got %q", v)
		}
	}
	return uid, gid, nil
}

// resolveUser decides who sandboxd runs as: the configured user; else
// the workspace's owner when that is not root, so that what the agent
// writes stays its owner's; else the image's user.
func (s *codegenSettings) resolveUser(workspace string, h Hardening) error {
	if s.uid >= 0 {
		return nil
	}
	if fi, err := os.Stat(workspace); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
			s.uid, s.gid = int(st.Uid), int(st.Gid)
			return nil
		}
	}
	uid, gid, err := parseNumericUser(h.User)
	if err != nil {
		return fmt.Errorf("hardening user: %w", err)
	}
	s.uid, s.gid = uid, gid
	return nil
}
