package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
	"github.com/altairalabs/promptkit-sandbox/internal/plugintest"
)

// The per-call cost of exec as a hook command, run as PromptKit runs it:
// a process with the request on its stdin. BenchmarkExecBaseline runs the
// hook itself, so the others read as ratios to it. BenchmarkExecFloor
// runs it from the smallest Go program that stands in between: exec
// through a serve is such a program, and the serve's own spawn of the
// hook, so the floor is what it can come down to.
//
//	go test -run '^$' -bench 'BenchmarkExec' -count 5 ./cmd/promptkit-sandbox/

// benchHook is a trivial hook: it echoes the request.
var benchHook = []string{"cat"}

var benchRequest = []byte(`{"hook":"provider","phase":"before_call","request":{"content":"hello"}}`)

func BenchmarkExecBaseline(b *testing.B) {
	for b.Loop() {
		runBench(b, exec.Command(benchHook[0], benchHook[1:]...))
	}
}

func BenchmarkExecFloor(b *testing.B) {
	bin := filepath.Join(shortTempDir(b), "spawnfloor")
	plugintest.GoBuild(b, bin, "./testdata/spawnfloor", "")
	for b.Loop() {
		runBench(b, exec.Command(bin, benchHook...))
	}
}

func BenchmarkExecCold(b *testing.B) {
	cfg := writeConfig(b, shortTempDir(b), directConfig)
	env := isolated(b)
	b.Run("direct", func(b *testing.B) {
		benchExec(b, env, nil, "--config", cfg, "--sandbox", "host")
	})
	b.Run("docker_run", func(b *testing.B) {
		dockertest.Require(b)
		cfg, _, _, cold, _ := dockerConfig(b)
		benchExec(b, env, nil, "--config", cfg, "--sandbox", cold, "--plugin-dir", dockerPluginDir(b))
	})
}

func BenchmarkExecServe(b *testing.B) {
	cfg := writeConfig(b, shortTempDir(b), directConfig)
	env := isolated(b)
	b.Run("direct", func(b *testing.B) {
		sock := filepath.Join(shortTempDir(b), "s.sock")
		startServe(b, sock, nil, "--config", cfg)
		benchExec(b, env, nil, "--socket", sock, "--config", cfg, "--sandbox", "host")
	})
	// The same calls made from this process (no takeover, no process
	// start): what the relay and the serve cost, without exec's start.
	b.Run("direct_in_process", func(b *testing.B) {
		sock := filepath.Join(shortTempDir(b), "s.sock")
		startServe(b, sock, nil, "--config", cfg)
		args := []string{"exec", "--socket", sock, "--config", cfg, "--sandbox", "host", "--"}
		args = append(args, benchHook...)
		for b.Loop() {
			var out, errs bytes.Buffer
			if code := run(args, bytes.NewReader(benchRequest), &out, &errs); code != 0 || !bytes.Equal(out.Bytes(), benchRequest) {
				b.Fatalf("exit %d, stdout %q, stderr %q", code, out.Bytes(), errs.Bytes())
			}
		}
	})
	// A hook runs once or twice per LLM call, seconds apart: the pool
	// has refilled by the next call. Waiting for that is not timed; back
	// to back, each call would start its own container, as cold does.
	b.Run("docker_run_pool", func(b *testing.B) {
		dockertest.Require(b)
		cfg, warm, label, _, _ := dockerConfig(b)
		sock := filepath.Join(shortTempDir(b), "s.sock")
		startServe(b, sock, nil, "--config", cfg, "--plugin-dir", dockerPluginDir(b))
		// The first call of a command, untimed, starts its pool.
		benchExec(b, env, func() { waitContainers(b, label, 1) }, "--socket", sock, "--config", cfg, "--sandbox", warm)
	})
}

// benchExec times b.N calls of exec with args running the hook. With
// ready, the first call is made untimed, and ready runs untimed before
// each timed call, to wait for what the call should find.
func benchExec(b *testing.B, env []string, ready func(), args ...string) {
	cli := cliBinary(b)
	argv := append(append([]string{"exec"}, args...), append([]string{"--"}, benchHook...)...)
	call := func() {
		cmd := exec.Command(cli, argv...)
		cmd.Env = append(os.Environ(), env...)
		runBench(b, cmd)
	}
	if ready != nil {
		call()
	}
	b.ResetTimer()
	for range b.N {
		if ready != nil {
			b.StopTimer()
			ready()
			b.StartTimer()
		}
		call()
	}
}

// runBench runs cmd with the request on its stdin and checks it echoed.
func runBench(b *testing.B, cmd *exec.Cmd) {
	cmd.Stdin = bytes.NewReader(benchRequest)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !bytes.Equal(out, benchRequest) {
		b.Fatalf("%v: %v %q\n%s", cmd.Args, err, out, stderr.String())
	}
}
