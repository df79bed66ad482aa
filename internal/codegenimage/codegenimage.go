// Package codegenimage describes the sandboxd container image and how it
// must be run: its name, the user the agent's processes run as, the paths
// a provider mounts, and the hardening flags of `docker run`. It is plain
// data, so the docker plugin (which starts these containers) and the test
// that proves the profile works share one definition.
//
// `make sandboxd-image` builds the image; docs/sandboxd.md ("In a
// container") explains each setting.
package codegenimage

import "strconv"

// The image's reference is Repository:Version.
const (
	Repository = "promptkit/sandboxd"
	// Version is the tag `make sandboxd-image` builds by default (the
	// Makefile's VERSION; a test keeps the two equal).
	Version = "0.1.0"
)

// Image returns the reference of the image at version ("" for Version).
func Image(version string) string {
	if version == "" {
		version = Version
	}
	return Repository + ":" + version
}

// The unprivileged user the image runs sandboxd, and so every command of
// the agent, as. It has no capabilities and owns nothing in the image.
const (
	UID      = 65532
	GID      = 65532
	UserName = "sandboxd"
)

// User is UID:GID, as `docker run --user` takes it.
var User = strconv.Itoa(UID) + ":" + strconv.Itoa(GID)

// Paths inside the container.
const (
	// WorkspaceDir is where the workspace volume is mounted; the image's
	// WORKDIR, and the workspace sandboxd serves by default.
	WorkspaceDir = "/workspace"
	// RunDir is an empty directory in the image, for a private host
	// directory the provider bind-mounts over it: sandboxd's socket and
	// token live there.
	RunDir = "/run/sandboxd"
	// SocketPath is where sandboxd listens when the provider asks it to
	// (ServeArgs).
	SocketPath = RunDir + "/mcp.sock"
	// TokenPath is the token file the provider writes (mode 0600, owned by
	// the container's user) before starting the container.
	TokenPath = RunDir + "/token"
	// TmpDir is the only writable place besides the workspace: HOME, the
	// Go build and module caches and XDG_CACHE_HOME point into it.
	TmpDir = "/tmp"
	// CacheDir is an empty directory in the image, mode 1777, for a
	// volume a provider mounts over it to keep the Go build and module
	// caches past one container. Docker copies a new, empty named
	// volume's ownership and mode from it, so any user the container
	// runs as can write the volume.
	CacheDir = "/cache"
)

// Hardening defaults.
const (
	// TmpfsSize bounds /tmp, which holds the Go build cache: a cold build
	// of a mid-sized module's tests fills a few hundred MB.
	TmpfsSize = "1g"
	// PidsLimit bounds processes and threads (the pids cgroup counts
	// threads): sandboxd, the go command and its compilers use a few
	// hundred on a many-core machine; a fork bomb stops here.
	PidsLimit = 1024
	// Network is the default network: none, not even a loopback to the
	// host. sandboxd is reached over its unix socket.
	Network = "none"
)

// InputsLabel is the image label holding the hash of everything the image
// was built from; `make sandboxd-image` skips the build when it matches.
const InputsLabel = "org.promptkit.sandboxd.inputs"

// Run is one container's `docker run` settings. DefaultRun fills it; a
// provider may change User (see its comment) and the limits.
type Run struct {
	// User is UID:GID. It must own (or be able to write) the workspace and
	// the run directory and read the token file. Default User; a provider
	// that serves a directory it did not create runs as that directory's
	// owner instead of chowning someone's files.
	User string
	// Workspace is the host directory mounted read-write at WorkspaceDir.
	Workspace string
	// RunDir is the private host directory mounted at RunDir (socket and
	// token); "" mounts nothing, e.g. for --stdio.
	RunDir    string
	TmpfsSize string
	PidsLimit int
	Network   string
}

// DefaultRun returns the profile's settings for a workspace and a run
// directory (which may be "").
func DefaultRun(workspace, runDir string) Run {
	return Run{
		User:      User,
		Workspace: workspace,
		RunDir:    runDir,
		TmpfsSize: TmpfsSize,
		PidsLimit: PidsLimit,
		Network:   Network,
	}
}

// Args returns the `docker run` flags of r, to go before the image.
//
// /tmp is mounted exec: go test runs the test binaries it compiles there,
// and Docker's tmpfs default is noexec.
func (r Run) Args() []string {
	args := []string{
		"--read-only",
		"--tmpfs", TmpDir + ":rw,exec,nosuid,nodev,size=" + r.TmpfsSize,
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--pids-limit", strconv.Itoa(r.PidsLimit),
		"--network", r.Network,
		"--user", r.User,
		"-v", r.Workspace + ":" + WorkspaceDir,
	}
	if r.RunDir != "" {
		args = append(args, "-v", r.RunDir+":"+RunDir)
	}
	return args
}

// ServeArgs are sandboxd's arguments (after the image) for serving MCP on
// SocketPath with the token in TokenPath. They replace the image's default
// arguments, so they name the workspace again.
func ServeArgs() []string {
	return []string{"--addr", "unix:" + SocketPath, "--token-file", TokenPath, "--workspace", WorkspaceDir}
}
