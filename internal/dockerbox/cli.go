package dockerbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// dockerCLI runs the docker binary for transport: cli.
type dockerCLI struct {
	path      string
	extraArgs []string
}

func newDockerCLI(path string, extraArgs []string) (*dockerCLI, error) {
	if path == "" {
		path = "docker"
	}
	resolved, err := exec.LookPath(path)
	if err != nil {
		return nil, sandbox.NewError(sandbox.KindStart,
			fmt.Sprintf("transport cli: the docker CLI %q was not found (set docker_path, or use transport: api)", path), err)
	}
	return &dockerCLI{path: resolved, extraArgs: extraArgs}, nil
}

// endpoint is the engine the CLI talks to, for messages.
func (d *dockerCLI) endpoint() string {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return h
	}
	return "unix:///var/run/docker.sock"
}

// cliEnvReserved are variables the docker CLI reads itself: a call's
// value for one of them must not reach the CLI's environment, so it goes
// in an env file instead.
func cliEnvReserved(key string) bool {
	switch key {
	case "PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
		"http_proxy", "https_proxy", "no_proxy":
		return true
	}
	return strings.HasPrefix(key, "DOCKER_") || strings.HasPrefix(key, "BUILDX_") || strings.HasPrefix(key, "COMPOSE_")
}

// cliEnv turns a container environment into docker CLI arguments and the
// CLI process's environment (entries over the plugin's own). Values never appear on the command line:
// "-e KEY" takes the value from the CLI's own environment, and variables
// the CLI reads itself go through an env file (mode 0600, removed by the
// returned cleanup once the container exists).
func cliEnv(env []string) (args, procEnv []string, cleanup func(), err error) {
	cleanup = func() {}
	var file []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if cliEnvReserved(k) {
			if strings.ContainsAny(v, "\n\r") {
				return nil, nil, cleanup, sandbox.NewError(sandbox.KindStart, fmt.Sprintf(
					"transport cli: the value of %s contains a line break, which the docker CLI cannot pass for a variable it reads itself (use transport: api)", k), nil)
			}
			file = append(file, kv)
			continue
		}
		args = append(args, "-e", k)
		procEnv = append(procEnv, kv)
	}
	if len(file) > 0 {
		dir, err := os.MkdirTemp("", "pks-env-")
		if err != nil {
			return nil, nil, cleanup, sandbox.NewError(sandbox.KindStart, "transport cli: env file", err)
		}
		cleanup = func() { _ = os.RemoveAll(dir) }
		path := dir + "/env"
		if err := os.WriteFile(path, []byte(strings.Join(file, "\n")+"\n"), 0o600); err != nil {
			cleanup()
			return nil, nil, func() {}, sandbox.NewError(sandbox.KindStart, "transport cli: env file", err)
		}
		args = append(args, "--env-file", path)
	}
	return args, procEnv, cleanup, nil
}

// run runs the docker CLI to completion and returns its stdout, stderr
// and exit code; err is set only when it could not run or ctx ended.
func (d *dockerCLI) run(ctx context.Context, args ...string) (stdout, stderr string, code int, err error) {
	var out, errb bytes.Buffer
	code, err = d.exec(ctx, args, nil, nil, &out, &errb)
	return out.String(), errb.String(), code, err
}

// unreachableMsg reports the CLI's words for an engine it could not reach.
func unreachableMsg(stderr string) bool {
	return strings.Contains(stderr, "Cannot connect to the Docker daemon") || strings.Contains(stderr, "error during connect")
}

// cliErr classifies a failed docker CLI run: an unreachable engine is a
// transport error naming the endpoint; anything else is kind, with the
// CLI's words.
func (d *dockerCLI) cliErr(kind sandbox.Kind, op, stderr string) error {
	msg := cliMessage(stderr)
	if unreachableMsg(stderr) {
		return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("docker engine at %s is unreachable", d.endpoint()), errors.New(msg))
	}
	return sandbox.NewError(kind, fmt.Sprintf("%s: %s", op, msg), nil)
}

// cliMessage trims the CLI's stderr to its message.
func cliMessage(stderr string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Run 'docker ") && !strings.HasPrefix(l, "See 'docker ") {
			lines = append(lines, strings.TrimPrefix(l, "docker: "))
		}
	}
	msg := strings.Join(lines, "; ")
	if len(msg) > 1024 {
		msg = msg[:1024] + "..."
	}
	if msg == "" {
		msg = "the docker CLI failed without a message"
	}
	return msg
}

// removeContainer force-removes a container through the CLI, with a
// context of its own.
func (d *dockerCLI) removeContainer(name string) (removed bool) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	out, _, _, _ := d.run(ctx, "rm", "-f", "-v", name)
	// docker rm names what it removed; a missing container is only an
	// error message (and exit status 0, with -f).
	return strings.TrimSpace(out) == name
}

// killContainer SIGKILLs a container through the CLI, by deadline. It
// reports whether the container exists (a container that has
// exited already counts: there is nothing left to kill).
func (d *dockerCLI) killContainer(name string, deadline time.Time) (found bool) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	_, stderr, code, err := d.run(ctx, "kill", "--signal", "KILL", name)
	return err == nil && (code == 0 || strings.Contains(stderr, "is not running"))
}

// inspect returns a Go-template view of a container, and whether it
// exists.
func (d *dockerCLI) inspect(ctx context.Context, name, format string) (string, bool, error) {
	out, stderr, code, err := d.run(ctx, "container", "inspect", "--format", format, name)
	if err != nil {
		return "", false, err
	}
	if code != 0 {
		if strings.Contains(stderr, "No such container") || strings.Contains(stderr, "No such object") {
			return "", false, nil
		}
		return "", false, d.cliErr(sandbox.KindTransport, "inspect container "+name, stderr)
	}
	return strings.TrimSpace(out), true, nil
}

// cliProcess is a docker CLI process started with its stdin open (fed
// later, by feed), whose exit is awaited in the background.
type cliProcess struct {
	p          *shell.Process
	stdin      *io.PipeWriter
	exited     chan struct{} // closed once the CLI has exited
	code       int           // valid once exited is closed
	err        error         // the CLI did not exit by itself; valid once exited is closed
	cleanupEnv func()        // removes the env file (see cliEnv)
}

// start runs the CLI with args and env (from cliEnv, whose cleanup it
// takes over), its output going to stdout and stderr, through
// shared/shell: its own process group, killed with it.
func (d *dockerCLI) start(args, env []string, cleanupEnv func(), stdout, stderr io.Writer) (*cliProcess, error) {
	pr, pw := io.Pipe()
	p, err := shell.StartClient(context.Background(), d.path, args, env, pr, stdout, stderr)
	if err != nil {
		cleanupEnv()
		return nil, sandbox.NewError(sandbox.KindStart, "transport cli: start "+d.path, err)
	}
	c := &cliProcess{p: p, stdin: pw, exited: make(chan struct{}), cleanupEnv: cleanupEnv}
	go func() {
		c.code, c.err = shell.ClientExit(context.Background(), p)
		// A feed after the exit fails instead of waiting for a reader.
		_ = pr.CloseWithError(io.ErrClosedPipe)
		close(c.exited)
	}()
	return c, nil
}

// feed writes data to the CLI's stdin and closes it; the returned channel
// is closed when that is done.
func (c *cliProcess) feed(data []byte) <-chan struct{} {
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		if len(data) > 0 {
			_, _ = c.stdin.Write(data)
		}
		_ = c.stdin.Close()
	}()
	return fed
}

// kill ends the CLI and its process group and waits for it.
func (c *cliProcess) kill() {
	c.p.Stop()
	<-c.exited
}

// exitCode is the CLI's exit status once it has exited; an error means
// it did not exit by itself.
func (c *cliProcess) exitCode(what string) (int, error) {
	c.cleanupEnv()
	if c.err != nil {
		return 0, sandbox.NewError(sandbox.KindTransport, what+": the docker CLI", c.err)
	}
	return c.code, nil
}
