package dockerbox

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// EnvCodegenDir overrides where docker_codegen keeps its private
// directories (tests point it at a directory of their own).
const EnvCodegenDir = "PROMPTKIT_CODEGEN_DIR"

// codegenRoot is the directory holding one private directory per codegen
// sandbox: $XDG_RUNTIME_DIR/promptkit-sandbox/codegen, the per-user
// runtime directory, or /tmp/promptkit-codegen-UID where there is none.
func codegenRoot() string {
	if d := os.Getenv(EnvCodegenDir); d != "" && filepath.IsAbs(d) {
		return d
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "promptkit-sandbox", "codegen")
	}
	return filepath.Join("/tmp", "promptkit-codegen-"+strconv.Itoa(os.Getuid()))
}

// ownerFile, in a sandbox's private directory, names the plugin process
// that made it ("PID HOST"), for the stale sweep.
const ownerFile = "owner"

// privateRoot creates root (0700) if needed and refuses one another user
// could write into: whoever can swap a sandbox's directory could read its
// token or plant its socket.
func privateRoot(root string) error {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("codegen directory: %w", err)
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return fmt.Errorf("codegen directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("codegen directory %s is not a directory (a symlink?)", root)
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("codegen directory %s is not owned by this user (uid %d)", root, os.Getuid())
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("codegen directory %s is open to group or others (mode %04o); it must be 0700", root, fi.Mode().Perm())
	}
	return nil
}

// privateDir is one sandbox's directory: dir itself (0700, the plugin's),
// run/ (0700, the container user's: mounted at Hardening.SocketDir, it
// holds the token and sandboxd's socket) and, when the provider makes the
// workspace, workspace/ (the container user's).
type privateDir struct {
	dir, run, token string
	workspace       string // set when the provider made it
}

// newPrivateDir creates the directory of sandbox id under root and
// records this process as its owner.
func newPrivateDir(root, id string) (*privateDir, error) {
	if err := privateRoot(root); err != nil {
		return nil, err
	}
	d := &privateDir{dir: filepath.Join(root, id)}
	d.run = filepath.Join(d.dir, "run")
	d.token = filepath.Join(d.run, tokenName)
	if err := os.Mkdir(d.dir, 0o700); err != nil {
		return nil, fmt.Errorf("codegen directory: %w", err)
	}
	owner := fmt.Sprintf("%d %s\n", os.Getpid(), hostname())
	if err := os.WriteFile(filepath.Join(d.dir, ownerFile), []byte(owner), 0o600); err != nil {
		_ = d.remove()
		return nil, fmt.Errorf("codegen directory: %w", err)
	}
	if err := os.Mkdir(d.run, 0o700); err != nil {
		_ = d.remove()
		return nil, fmt.Errorf("codegen directory: %w", err)
	}
	return d, nil
}

// makeWorkspace creates an empty workspace the sandbox owns: removed
// with the directory on release.
func (d *privateDir) makeWorkspace() error {
	d.workspace = filepath.Join(d.dir, "workspace")
	if err := os.Mkdir(d.workspace, 0o700); err != nil {
		return fmt.Errorf("codegen workspace: %w", err)
	}
	return nil
}

// writeToken writes a fresh token, 32 random bytes in base64url, to the
// token file (0600) and returns it. sandboxd reads it from there
// (--token-file): it is never in an environment or on a command line.
func (d *privateDir) writeToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	if err := os.WriteFile(d.token, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return token, nil
}

// handTo gives run/, the token and a workspace the provider made to the
// container's user, which must read the token and create the socket.
// Only root may give files away: a plugin running as another user serves
// as itself (the user key, or the workspace's owner).
func (d *privateDir) handTo(uid, gid int) error {
	if uid == os.Getuid() && gid == os.Getgid() {
		return nil
	}
	paths := []string{d.run, d.token}
	if d.workspace != "" {
		paths = append(paths, d.workspace)
	}
	for _, p := range paths {
		if err := os.Lchown(p, uid, gid); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return fmt.Errorf("hand the token to the container's user %d:%d: %w (only root may; set the sandbox's user: to your own uid:gid)", uid, gid, err)
			}
			return fmt.Errorf("hand the token to the container's user %d:%d: %w", uid, gid, err)
		}
	}
	return nil
}

// remove deletes the directory and everything in it: the token, the
// socket and a workspace the provider made. A workspace given to the
// provider lives elsewhere and is never touched.
func (d *privateDir) remove() error {
	return os.RemoveAll(d.dir)
}

// removeStaleDirs removes the private directories under root whose
// owning plugin process, on this machine, no longer exists; it returns
// their paths.
func removeStaleDirs(root string, alive func(pid int) bool) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("codegen directory: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, ownerFile)) // #nosec G304 -- dir is an entry of the plugin's own codegen root
		if err != nil {
			continue // not ours, or being made right now
		}
		pidText, host, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		pid, err := strconv.Atoi(pidText)
		if err != nil || host != hostname() || alive(pid) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}
