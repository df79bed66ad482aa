package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/mcptest"
)

// lsReport is what codegen ls --json and ls --volumes --json print.
type lsReport struct {
	Sandboxes []struct {
		ID              string `json:"id"`
		WorkspaceVolume string `json:"workspace_volume"`
	}
	Volumes []struct {
		Name    string `json:"name"`
		Mode    string `json:"mode"`
		Sandbox string `json:"sandbox"`
	}
}

// TestCodegenWorkspaceVolumeThroughServe is the CLI's workspace volume
// with the real plugin and engine: up --workspace-volume creates it; a
// second up naming it while attached, and one naming a volume we did not
// create, exit 125 saying why; ls (text and JSON) lists it with its
// sandbox; down keeps it, detached, and the next up finds the agent's
// files; down --purge removes it; nothing is left.
func TestCodegenWorkspaceVolumeThroughServe(t *testing.T) {
	s := newCodegenSetup(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	vol, foreign := "pks-ws-e2e-"+hex.EncodeToString(b[:]), "pks-foreign-e2e-"+hex.EncodeToString(b[:])
	// Registered before serve's kill, so it runs after it.
	dockertest.CleanupWithEngine(t, func() {
		for _, v := range append([]string{vol, foreign}, cacheVolumesOf(t, "volume:"+vol)...) {
			removeVolumeSoon(v)
		}
	})
	serve := s.command("serve", "--plugin-dir", s.pluginDir, "--config", s.cfg)
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	sock := filepath.Join(s.sockDir, "serve.sock")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve never listened")
		}
	}
	up := func(volume string) (upReport, int, string) {
		t.Helper()
		cmd := s.command("codegen", "up", "--config", s.cfg, "--sandbox", "code", "--json", "--workspace-volume", volume)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := exitCode(cmd.Run())
		var r upReport
		if code == 0 {
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
				t.Fatalf("codegen up --json: %v: %q", err, stdout.String())
			}
		}
		return r, code, stderr.String()
	}
	ls := func() lsReport {
		t.Helper()
		var l lsReport
		for _, c := range []struct {
			args []string
			into any
		}{{[]string{"codegen", "ls", "--json"}, &l.Sandboxes}, {[]string{"codegen", "ls", "--volumes", "--json"}, &l.Volumes}} {
			out, err := s.command(c.args...).Output()
			if err != nil {
				t.Fatalf("%v: %v", c.args, err)
			}
			if err := json.Unmarshal(out, c.into); err != nil {
				t.Fatalf("%v: %v: %q", c.args, err, out)
			}
		}
		return l
	}
	// attached says whether ls lists vol, and the sandbox it names.
	attached := func(l lsReport) (string, bool) {
		for _, v := range l.Volumes {
			if v.Name == vol && v.Mode == "docker_codegen" {
				return v.Sandbox, true
			}
		}
		return "", false
	}

	r, code, stderr := up(vol)
	if code != 0 {
		t.Fatalf("codegen up --workspace-volume: exit %d: %s", code, stderr)
	}
	if r.WorkspaceVolume != vol || r.Workspace != "" || r.Details["workspace_volume"] != vol {
		t.Errorf("up: %+v", r)
	}
	cs := mcptest.Connect(t, r.Endpoint, r.Token)
	mcptest.CallText(t, cs, "Write", map[string]any{"file_path": "kept.txt", "content": "through serve\n"})

	if _, code, stderr := up(vol); code != 125 || !strings.Contains(stderr, "attached to another sandbox") || !strings.Contains(stderr, r.ID) {
		t.Errorf("a second up on the attached volume: exit %d, stderr %q", code, stderr)
	}
	dockertest.Docker(t, "volume", "create", foreign)
	if _, code, stderr := up(foreign); code != 125 || !strings.Contains(stderr, "was not made by promptkit-sandbox") {
		t.Errorf("up on a volume we did not create: exit %d, stderr %q", code, stderr)
	}
	l := ls()
	if id, ok := attached(l); !ok || id != r.ID || len(l.Sandboxes) != 1 || l.Sandboxes[0].WorkspaceVolume != vol {
		t.Errorf("ls --json while attached: %+v", l)
	}
	for _, v := range l.Volumes {
		if v.Name == foreign {
			t.Errorf("ls lists a volume we did not create: %+v", v)
		}
	}
	text, err := s.command("codegen", "ls").Output()
	if err != nil || !strings.Contains(string(text), "WORKSPACE VOLUME") || !strings.Contains(string(text), "volume "+vol) {
		t.Errorf("codegen ls: %v\n%s", err, text)
	}

	if out, err := s.command("codegen", "down", r.ID).CombinedOutput(); err != nil {
		t.Fatalf("codegen down: %v: %s", err, out)
	}
	waitGone(t, r.ID, 5*time.Second)
	if id, ok := attached(ls()); !ok || id != "" {
		t.Errorf("ls after down: listed %v, attached to %q; want listed, detached", ok, id)
	}

	// Held in the foreground (codegen.Up): the files are there, and
	// Ctrl-C keeps the volume.
	fg, fr := s.startUp(t, "--foreground", "--workspace-volume", vol)
	if fr.HeldBy != "foreground" || fr.WorkspaceVolume != vol {
		t.Errorf("foreground up: %+v", fr)
	}
	cs = mcptest.Connect(t, fr.Endpoint, fr.Token)
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "kept.txt"}); !strings.Contains(out, "through serve") {
		t.Errorf("the volume in the foreground reads %q", out)
	}
	if err := fg.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := fg.Wait(); err != nil {
		t.Errorf("foreground up after SIGINT: %v", err)
	}
	waitGone(t, fr.ID, 5*time.Second)

	r2, code, stderr := up(vol)
	if code != 0 {
		t.Fatalf("codegen up again: exit %d: %s", code, stderr)
	}
	cs = mcptest.Connect(t, r2.Endpoint, r2.Token)
	if out := mcptest.CallText(t, cs, "Read", map[string]any{"file_path": "kept.txt"}); !strings.Contains(out, "through serve") {
		t.Errorf("the reattached volume reads %q", out)
	}
	if out, err := s.command("codegen", "down", r2.ID, "--purge").CombinedOutput(); err != nil {
		t.Fatalf("codegen down --purge: %v: %s", err, out)
	}
	waitGone(t, r2.ID, 5*time.Second)
	if _, ok := attached(ls()); ok {
		t.Error("ls lists the volume after down --purge")
	}
	if out := dockertest.Docker(t, "volume", "ls", "-q", "--filter", "name=^"+vol+"$"); strings.TrimSpace(out) != "" {
		t.Errorf("volume left after down --purge: %q", out)
	}
	if got := cacheVolumesOf(t, "volume:"+vol); len(got) != 0 {
		t.Errorf("cache volume left after down --purge: %q", got)
	}
}
