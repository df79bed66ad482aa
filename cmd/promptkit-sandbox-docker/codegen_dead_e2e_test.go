package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCodegenUpNoticesDeadContainer: a foreground codegen up whose
// container dies (here SIGKILLed from outside) says so, with the exit
// code, and exits 125 within seconds instead of holding a dead sandbox.
func TestCodegenUpNoticesDeadContainer(t *testing.T) {
	s := newCodegenSetup(t)
	cmd := s.command("codegen", "up", "--plugin-dir", s.pluginDir, "--config", s.cfg, "--sandbox", "code", "--json", "--foreground")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() { exited <- cmd.Wait() }()
	if err != nil {
		t.Fatalf("codegen up printed nothing: %v\n%s", err, stderr.String())
	}
	var r upReport
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("codegen up --json: %v: %q", err, line)
	}
	dockertest.Docker(t, "kill", "--signal", "KILL", r.Details["container"])
	killed := time.Now()
	select {
	case err := <-exited:
		if code := exitCode(err); code != 125 {
			t.Errorf("codegen up exited %d after its container died, want 125", code)
		}
		t.Logf("codegen up exited %v after the container's SIGKILL", time.Since(killed).Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		t.Fatalf("codegen up still running 15s after its container died\n%s", stderr.String())
	}
	if msg := stderr.String(); !strings.Contains(msg, "sandbox code ("+r.ID+") is gone: it died: stopped; its output ended: ") || !strings.Contains(msg, "(exit code 137)") {
		t.Errorf("codegen up said:\n%s\nwant that its sandbox died, with exit code 137", msg)
	}
	waitGone(t, r.ID, 10*time.Second)
}
