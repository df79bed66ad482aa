package dockerbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

func TestWorkspaceRefusal(t *testing.T) {
	for real, want := range map[string]string{
		"/":                       "the host's root",
		"/etc":                    "in the system directory /etc",
		"/etc/ssh":                "in the system directory /etc",
		"/usr/local/src":          "in the system directory /usr",
		"/lib64":                  "in the system directory /lib64",
		"/var/lib/docker/volumes": "in the system directory /var/lib/docker",
		"/run/user/1000":          "in the system directory /run",
		"/home":                   "a system directory",
		"/tmp":                    "a system directory",
		"/var":                    "a system directory",
		"/root":                   "a system directory",
		"/home/me":                "your home directory (its keys and credentials with it)",
		"/home/me/repo":           "",
		"/root/repo":              "",
		"/tmp/ws":                 "",
		"/var/lib/jenkins/ws":     "",
		"/etcetera":               "",
		"/usrlocal":               "",
		"/srv/git/project":        "",
	} {
		if got := workspaceRefusal(real, "/home/me"); got != want {
			t.Errorf("workspaceRefusal(%q) = %q, want %q", real, got, want)
		}
	}
}

// provisionErrIn provisions a docker_codegen sandbox with cfg and
// returns the error, which must be KindStart and mention every one of
// want; nothing may be left in the provider's directory. These fail
// before the engine is asked anything, so they need no Docker.
func provisionErrIn(t *testing.T, cfg map[string]any, want ...string) {
	t.Helper()
	p, root := newTestProvider(t)
	cfg["image"] = "promptkit-test/not-needed:0"
	_, err := p.Provision(context.Background(), plugin.ProvisionSpec{Name: "ws", Mode: CodegenMode, Config: cfg})
	if !errors.Is(err, sandbox.ErrStart) {
		t.Errorf("workspace %v: err = %v, want ErrStart", cfg["workspace"], err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("workspace %v: %v\ndoes not say %q", cfg["workspace"], err, w)
		}
	}
	assertNoDirs(t, root)
}

// TestCodegenWorkspaceRefused: a workspace that is, or resolves through
// a symlink to, the host's root or a system directory is refused; so is
// one reached through another user's symlink, and one the container's
// user cannot write, with the fix in the message.
func TestCodegenWorkspaceRefused(t *testing.T) {
	dir := t.TempDir()
	link := func(name, target string) string {
		l := filepath.Join(dir, name)
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	provisionErrIn(t, map[string]any{"workspace": link("root", "/")}, "workspace "+dir+"/root (which resolves to /) is the host's root")
	provisionErrIn(t, map[string]any{"workspace": link("etc", "../../../../../../etc")}, "(which resolves to /etc) is in the system directory /etc")
	provisionErrIn(t, map[string]any{"workspace": link("hop", dir+"/root") + "/usr/share"}, "(which resolves to /usr/share) is in the system directory /usr")
	provisionErrIn(t, map[string]any{"workspace": "/usr/share"}, "workspace /usr/share is in the system directory /usr")
	provisionErrIn(t, map[string]any{"workspace": link("loop", dir+"/loop")}, "more than 40 symlinks")
	provisionErrIn(t, map[string]any{"workspace": link("dangling", dir+"/nothing")}, "does not exist")

	// A directory of this user's, mode 0755: the image's user may not write it.
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	uid := os.Getuid()
	if uid != 65532 {
		provisionErrIn(t, map[string]any{"workspace": ws, "user": "65532:65532"},
			"workspace "+ws+" (owner "+itoa(uid)+":"+itoa(os.Getgid())+", mode 0755) is not writable by the sandbox's user 65532:65532",
			"chown -R 65532:65532 "+ws, "set the sandbox's user:")
	}
	// The rest makes a root-owned workspace and another user's symlink.
	proctest.RequireRoot(t)
	// The finding: a root-owned workspace is served as the image's user,
	// who cannot write it.
	provisionErrIn(t, map[string]any{"workspace": ws}, "is not writable by the sandbox's user 65532:65532", "chown -R 65532:65532 "+ws)
	// Through a link of a user root did not make: its owner points it.
	theirs := link("theirs", ws)
	if err := os.Lchown(theirs, 1234, 1234); err != nil {
		t.Fatal(err)
	}
	provisionErrIn(t, map[string]any{"workspace": theirs}, "goes through the symlink "+theirs+", owned by uid 1234")
}

// TestCodegenWorkspaceResolved: a workspace given through a symlink is
// resolved, and the directory it names is what is mounted and reported.
func TestCodegenWorkspaceResolved(t *testing.T) {
	image := codegenImage(t)
	p, _ := newTestProvider(t)
	ws := ownedWorkspace(t, 1234, 1234)
	link := filepath.Join(t.TempDir(), "repo")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	name := uniqueName(t)
	cleanupNamed(t, name)
	got, err := p.Provision(context.Background(), plugin.ProvisionSpec{Name: name, Mode: CodegenMode, Config: map[string]any{"image": image, "workspace": link}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(context.Background(), got.ID, plugin.ReleaseOptions{})
	if got.Workspace != ws {
		t.Errorf("Workspace %q, want the resolved %q", got.Workspace, ws)
	}
	binds := docker(t, "inspect", "--format", "{{json .HostConfig.Binds}}", got.Details["container"])
	if !strings.Contains(binds, `"`+ws+`:/workspace:rw"`) {
		t.Errorf("binds %s, want %s mounted at /workspace", binds, ws)
	}
}
