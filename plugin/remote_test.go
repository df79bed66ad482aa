package plugin

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/direct"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

func TestDescribe(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	if got := h.client.PluginName(); got != "" {
		t.Fatalf("PluginName before Describe = %q, want empty", got)
	}
	d, err := h.client.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Description{
		Name: testPlugin, Version: "1.2.3", ProtocolVersion: ProtocolVersion,
		Modes: []ModeInfo{
			{Name: "direct", ConfigKeys: []string{"timeout", "kill_grace", "output_limit", "clean_env", "workdir"}, Description: "runs on the host"},
			{Name: "fake"},
		},
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("Describe =\n%+v\nwant\n%+v", d, want)
	}
	if got := h.client.PluginName(); got != testPlugin {
		t.Fatalf("PluginName = %q, want %q", got, testPlugin)
	}
}

func TestOpenValidationErrorIsVerbatim(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	for _, cfg := range []map[string]any{
		{"timeout": "soon"},
		{"imgae": "x"},
		{"output_limit": -1},
	} {
		_, local := direct.Factory(context.Background(), "s", cfg)
		if local == nil {
			t.Fatalf("direct accepted %v", cfg)
		}
		_, remote := h.client.Open(context.Background(), "s", "direct", cfg)
		if remote == nil || remote.Error() != local.Error() {
			t.Errorf("Open(%v) = %v, want %q", cfg, remote, local)
		}
		if k := sandbox.KindOf(remote); k != sandbox.KindUnknown {
			t.Errorf("Open(%v) error kind = %v, want a plain error", cfg, k)
		}
	}
	_, err := h.client.Open(context.Background(), "s", "nope", nil)
	if want := `plugin testplug does not serve mode "nope" (it serves direct, fake)`; err == nil || err.Error() != want {
		t.Errorf("unknown mode: %v, want %q", err, want)
	}
	// The plugin is still there and serving.
	h.open(t, "ok", "direct", map[string]any{"timeout": "2s"})
}

func TestSpawnSeparatesStreams(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "sep", "direct", nil)
	resp, err := rs.Spawn(context.Background(), sandbox.Request{
		Command: "sh",
		Args:    []string{"-c", `cat; printf 'to stderr %s' "$1" >&2`, "sh", "arg1"},
		Stdin:   []byte("from stdin"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Stdout) != "from stdin" || string(resp.Stderr) != "to stderr arg1" || resp.Truncated() || resp.Err != nil {
		t.Fatalf("response %+v", resp)
	}
	if rs.Name() != "sep" || rs.Mode() != "direct" || rs.OutputLimit() != sandbox.DefaultOutputLimit {
		t.Fatalf("Name %q Mode %q OutputLimit %d", rs.Name(), rs.Mode(), rs.OutputLimit())
	}
}

func TestSpawnEnvIsResolvedOnTheHost(t *testing.T) {
	checkGoroutines(t)
	t.Setenv("PK_FORWARDED", "from host")
	h := startServer(t, nil)
	rs := h.open(t, "env", "direct", map[string]any{"clean_env": true})
	resp, err := rs.Spawn(context.Background(), sandbox.Request{
		Command: "/usr/bin/env",
		Env:     []string{"PK_FORWARDED", "PK_NOT_SET_ANYWHERE", "PK_SET=x=y"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The server refuses bare keys, so this also proves they never left
	// the host unresolved.
	if got, want := string(resp.Stdout), "PK_FORWARDED=from host\nPK_SET=x=y\n"; got != want {
		t.Fatalf("env = %q, want %q", got, want)
	}
}

// TestOpenReportsForwardedEnv: what a sandbox says it sets in every
// process reaches the host, bare keys resolved in the plugin's
// environment, so the host need not read the sandbox's configuration to
// know which values to redact. A sandbox that says nothing reports
// nothing.
func TestOpenReportsForwardedEnv(t *testing.T) {
	checkGoroutines(t)
	t.Setenv("PK_BOX_FORWARDED", "from the plugin")
	h := startServer(t, map[string]sandbox.Factory{
		"direct": direct.Factory,
		"envbox": func(_ context.Context, name string, _ map[string]any) (sandbox.Sandbox, error) {
			return envSandbox{direct.New(name, shell.Options{}), []string{"PK_BOX_FORWARDED", "PK_BOX_UNSET", "PK_BOX_SET=x=y"}}, nil
		},
	})
	rs := h.open(t, "box", "envbox", nil)
	if got, want := rs.ForwardedEnv(), []string{"PK_BOX_FORWARDED=from the plugin", "PK_BOX_SET=x=y"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ForwardedEnv = %q, want %q", got, want)
	}
	if got := h.open(t, "plain", "direct", nil).ForwardedEnv(); got != nil {
		t.Errorf("direct: ForwardedEnv = %q, want none", got)
	}
}

type envSandbox struct {
	sandbox.Sandbox
	env []string
}

func (s envSandbox) ForwardedEnv() []string { return s.env }

func TestSpawnLargeStdoutIntact(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "big", "direct", map[string]any{"output_limit": 80 << 20})
	if rs.OutputLimit() != 80<<20 {
		t.Fatalf("OutputLimit = %d, want the backend's 80 MiB", rs.OutputLimit())
	}
	data := make([]byte, 64<<20)
	rand.Read(data)
	// The timeout is generous: the test is about integrity, and 64 MiB
	// through the hop under -race on a loaded machine can pass the
	// default 10 s.
	resp, err := rs.Spawn(context.Background(), sandbox.Request{Command: "cat", Stdin: data, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp.Stdout, data) || resp.Truncated() {
		t.Fatalf("64 MiB through cat: got %d bytes (truncated %v), equal %v", len(resp.Stdout), resp.Truncated(), bytes.Equal(resp.Stdout, data))
	}
}

func TestSpawnLargeStdinIntact(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "stdin", "direct", map[string]any{"output_limit": 32 << 20})
	data := make([]byte, 20<<20)
	rand.Read(data)
	resp, err := rs.Spawn(context.Background(), sandbox.Request{
		Command: "sh", Args: []string{"-c", "tee /dev/stderr | sha256sum"}, Stdin: data, Timeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := hex.EncodeToString(sum[:]) + "  -\n"; string(resp.Stdout) != want {
		t.Fatalf("sha256 of stdin = %q, want %q", resp.Stdout, want)
	}
	if !bytes.Equal(resp.Stderr, data) {
		t.Fatalf("stderr: %d bytes, want the 20 MiB of stdin", len(resp.Stderr))
	}
}

func TestSpawnTruncationSurvives(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "small", "direct", map[string]any{"output_limit": 1000})
	req := sandbox.Request{Command: "sh", Args: []string{"-c", "head -c 5000 /dev/zero; head -c 3000 /dev/zero >&2"}}
	local, _ := direct.Factory(context.Background(), "small", map[string]any{"output_limit": 1000})
	want, _ := local.Spawn(context.Background(), req)
	resp, err := rs.Spawn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Stdout) != 1000 || len(resp.Stderr) != 1000 || !resp.StdoutTruncated || !resp.StderrTruncated {
		t.Fatalf("got stdout %d stderr %d truncated %v/%v", len(resp.Stdout), len(resp.Stderr), resp.StdoutTruncated, resp.StderrTruncated)
	}
	if resp.StdoutTruncated != want.StdoutTruncated || resp.StderrTruncated != want.StderrTruncated {
		t.Fatalf("flags differ from in-process: %v/%v vs %v/%v", resp.StdoutTruncated, resp.StderrTruncated, want.StdoutTruncated, want.StderrTruncated)
	}
}

// A plugin that sends more than the cap it reported costs the host no
// more than the cap.
func TestSpawnHostCapsMisbehavingPlugin(t *testing.T) {
	checkGoroutines(t)
	addFake(t, &fakeSandbox{name: "liar", limit: 100, spawn: func(context.Context, sandbox.Request) (sandbox.Response, error) {
		return sandbox.Response{Stdout: bytes.Repeat([]byte("o"), 3<<20), Stderr: bytes.Repeat([]byte("e"), 150)}, nil
	}})
	h := startServer(t, nil)
	rs := h.open(t, "liar", "fake", nil)
	resp, err := rs.Spawn(context.Background(), sandbox.Request{Command: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Stdout) != 100 || cap(resp.Stdout) > 100 || !resp.StdoutTruncated {
		t.Fatalf("stdout: len %d cap %d truncated %v; want 100, <=100, true", len(resp.Stdout), cap(resp.Stdout), resp.StdoutTruncated)
	}
	if string(resp.Stderr) != strings.Repeat("e", 100) || !resp.StderrTruncated {
		t.Fatalf("stderr: %q truncated %v", resp.Stderr, resp.StderrTruncated)
	}
}

func TestSpawnConcurrent(t *testing.T) {
	checkGoroutines(t)
	h := startServer(t, nil)
	rs := h.open(t, "many", "direct", nil)
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := bytes.Repeat([]byte(fmt.Sprintf("call %d;", i)), 1000*(i+1))
			resp, err := rs.Spawn(context.Background(), sandbox.Request{
				Command: "sh",
				Args:    []string{"-c", `cat; printf '%s' "$TAG" >&2; exit $(($1 % 4))`, "sh", fmt.Sprint(i)},
				Env:     []string{fmt.Sprintf("TAG=tag-%d", i)},
				Stdin:   in,
			})
			var xe *sandbox.ExitError
			switch {
			case !bytes.Equal(resp.Stdout, in):
				errs <- fmt.Errorf("call %d: stdout %d bytes, want %d (err %v, stderr %q)", i, len(resp.Stdout), len(in), err, resp.Stderr)
			case string(resp.Stderr) != fmt.Sprintf("tag-%d", i):
				errs <- fmt.Errorf("call %d: stderr %q", i, resp.Stderr)
			case i%4 == 0 && err != nil:
				errs <- fmt.Errorf("call %d: %v", i, err)
			case i%4 != 0 && (!errors.As(err, &xe) || xe.Code != i%4 || resp.Err != err):
				errs <- fmt.Errorf("call %d: err %v, want exit code %d", i, err, i%4)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
