package main

import (
	"bytes"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
)

// TestRelayDropsMalformedClients: a relay connection that says nothing
// after the magic, sends what is no request, lies about a frame's length
// or hangs up mid-frame is closed, and the serve goes on running calls.
func TestRelayDropsMalformedClients(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	sock := filepath.Join(shortTempDir(t), "s.sock")
	srv := startServe(t, sock, nil, "--config", cfg)
	m := execrelay.Magic
	for name, send := range map[string]string{
		"nothing after the magic": m,
		"not a request":           m + "X\x00\x00\x00\x00",
		"a request too large":     m + "Q\x7f\xff\xff\xff",
		"a request cut short":     m + "Q\x00\x00\x00\x10abc",
		"a request of nonsense":   m + "Q\x00\x00\x00\x04\xff\xff\xff\xff",
		"not the relay, not gRPC": "GET / HTTP/1.1\r\nHost: serve\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, send); err != nil {
				t.Fatal(err)
			}
			// The serve answers nothing and hangs up, within the time it
			// gives a client to speak.
			_ = c.SetReadDeadline(time.Now().Add(execrelay.StallTimeout + 5*time.Second))
			got, err := io.ReadAll(c)
			if err != nil && !strings.Contains(err.Error(), "reset") {
				t.Errorf("read: %v", err)
			}
			if len(got) != 0 && !strings.HasPrefix(send, "GET") {
				t.Errorf("the serve answered %q", got)
			}
		})
	}
	if r := runExec(t, isolated(t), []byte("still"), "--socket", sock, "--config", cfg, "--sandbox", "host", "--", "cat"); r.code != 0 || r.stdout != "still" {
		t.Errorf("a call after the malformed ones: %+v", r)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, srv.stderr)
	}
}

// TestExecInProcessThroughServe: exec run in a process that did not
// start as the CLI (no takeover before main) relays its call all the
// same, with its stdin, stdout, stderr and status.
func TestExecInProcessThroughServe(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	sock := filepath.Join(shortTempDir(t), "s.sock")
	startServe(t, sock, []string{"SERVE_MARK=served"}, "--config", cfg)
	var stdout, stderr bytes.Buffer
	code := run([]string{"exec", "--socket", sock, "--config", cfg, "--sandbox", "host", "--",
		"sh", "-c", `cat; printf ':%s' "$SERVE_MARK"; echo oops >&2; exit 3`}, strings.NewReader("in"), &stdout, &stderr)
	if code != 3 || stdout.String() != "in:served" || stderr.String() != "oops\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 3, %q, %q", code, stdout.String(), stderr.String(), "in:served", "oops\n")
	}
}

// TestExecThroughServeLargeInputAndLimit: a 4 MiB request passes through
// the relay byte for byte; one over --max-input is refused as exec
// refuses it cold.
func TestExecThroughServeLargeInputAndLimit(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	sock := filepath.Join(shortTempDir(t), "s.sock")
	startServe(t, sock, nil, "--config", cfg)
	big := bytes.Repeat([]byte("0123456789abcdef"), 256<<10)
	r := runExec(t, isolated(t), big, "--socket", sock, "--config", cfg, "--sandbox", "host", "--", "cat")
	if r.code != 0 || r.stdout != string(big) {
		t.Errorf("4 MiB through the serve: exit %d, %d bytes back, stderr %q", r.code, len(r.stdout), r.stderr)
	}
	served := runExec(t, isolated(t), big, "--socket", sock, "--config", cfg, "--sandbox", "host", "--max-input", "1m", "--", "cat")
	cold := runExec(t, isolated(t), big, "--config", cfg, "--sandbox", "host", "--max-input", "1m", "--", "cat")
	if served.code != exitUsage || served != cold {
		t.Errorf("over --max-input, served: %+v\ncold: %+v", served, cold)
	}
}
