package dockerbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/tether"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Labels on every container the plugin creates.
const (
	LabelPlugin = "org.promptkit.sandbox.plugin" // always "docker"
	LabelName   = "org.promptkit.sandbox.name"   // the sandbox's name
	LabelPID    = "org.promptkit.sandbox.pid"    // the plugin process's PID
	LabelHost   = "org.promptkit.sandbox.host"   // the plugin's host name
	PluginName  = "docker"
)

// cleanupTimeout bounds the engine calls that remove what a call started
// once the call's own context is done.
const cleanupTimeout = 10 * time.Second

// stopBudget is how long past a call's deadline (or its cancel) the call
// itself waits for its container's kill and the hook's last output. An
// engine that does not answer within it does not hold the caller: the
// removal goes on in the background, within cleanupTimeout, and the
// stale sweep of a later start backs it up.
const stopBudget = time.Second

// afterDeadline is d past ctx's deadline, or past now for a context
// without one (or one already past it): how long work the caller started
// may go on once the caller has stopped waiting for it.
func afterDeadline(ctx context.Context, d time.Duration) time.Time {
	end := time.Now()
	if dl, ok := ctx.Deadline(); ok && dl.After(end) {
		end = dl
	}
	return end.Add(d)
}

// newClient connects to the engine the way the docker CLI does: DOCKER_HOST,
// DOCKER_TLS_VERIFY, DOCKER_CERT_PATH and DOCKER_API_VERSION from the
// environment, and the API version negotiated down to the engine's on the
// first request (1.41 for Debian's docker.io 20.10). No request is made
// here. (This client negotiates by default; WithAPIVersionNegotiation is
// a deprecated no-op.)
func newClient() (*client.Client, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, sandbox.NewError(sandbox.KindTransport, "docker engine: client configuration", err)
	}
	return cli, nil
}

// hostname labels containers so stale-container cleanup only judges PIDs
// of this machine.
var hostname = sync.OnceValue(func() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
})

func labels(sandboxName string) map[string]string {
	return map[string]string{
		LabelPlugin: PluginName,
		LabelName:   sandboxName,
		LabelPID:    strconv.Itoa(os.Getpid()),
		LabelHost:   hostname(),
	}
}

// containerName is a fresh name for a container the plugin creates.
func containerName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "pks-" + hex.EncodeToString(b[:])
}

// isConnErr reports an error that means the engine could not be reached
// (as opposed to an answer from it).
func isConnErr(err error) bool {
	if client.IsErrConnectionFailed(err) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// engineErr classifies the failure of an engine call made for a Spawn:
// the call's own deadline or cancellation first, then an unreachable
// engine (KindTransport, naming the endpoint), then the engine's answer
// as kind.
func engineErr(ctx context.Context, cli *client.Client, what string, timeout time.Duration, kind sandbox.Kind, op string, err error) error {
	if sandbox.Done(ctx) {
		return sandbox.ContextError(ctx, what, timeout)
	}
	if isConnErr(err) {
		return unreachable(cli, err)
	}
	return sandbox.NewError(kind, fmt.Sprintf("%s: %s", what, op), err)
}

func unreachable(cli *client.Client, err error) error {
	return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("docker engine at %s is unreachable", cli.DaemonHost()), err)
}

// openErr classifies an engine failure while a sandbox opens; those are
// reported by the factory.
func openErr(cli *client.Client, op string, err error) error {
	if isConnErr(err) {
		return unreachable(cli, err)
	}
	if cerrdefs.IsNotFound(err) {
		return sandbox.NewError(sandbox.KindStart, op, err)
	}
	return sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("docker engine at %s: %s", cli.DaemonHost(), op), err)
}

// attachment is a hijacked attach (or exec start) connection: stdin is
// written to it and its multiplexed output is split into two writers.
type attachment struct {
	hr        client.HijackedResponse
	closeOnce sync.Once

	stdinDone chan struct{}
	fed       bool
	demuxed   bool
	copyDone  chan struct{} // closed when the output stream has ended
	copyErr   error         // valid once copyDone is closed
}

func newAttachment(hr client.HijackedResponse) *attachment {
	return &attachment{hr: hr, stdinDone: make(chan struct{}), copyDone: make(chan struct{})}
}

// feed writes stdin and closes the write side, so the process sees EOF.
// A process that exits without reading all of it is its own business.
func (a *attachment) feed(stdin []byte) {
	a.fed = true
	go func() {
		defer close(a.stdinDone)
		if len(stdin) > 0 {
			if _, err := a.hr.Conn.Write(stdin); err != nil {
				return
			}
		}
		_ = a.hr.CloseWrite()
	}()
}

// feedFrame writes stdin as the tether's one frame and leaves the
// connection open: the tether takes its end for the plugin's, and the
// engine closes the container's stdin only when the connection goes.
func (a *attachment) feedFrame(stdin []byte) {
	a.fed = true
	go func() {
		defer close(a.stdinDone)
		if _, err := a.hr.Conn.Write(tether.Header(len(stdin))); err != nil || len(stdin) == 0 {
			return
		}
		_, _ = a.hr.Conn.Write(stdin)
	}()
}

// stream copies stdin to the connection as it comes and then closes the
// write side. Unlike feed, close does not wait for it: r may have nothing
// yet (an exec waiting for its call), and the copy ends at its first
// write after the connection is closed.
func (a *attachment) stream(r io.Reader) {
	go func() {
		if _, err := io.Copy(a.hr.Conn, r); err == nil {
			_ = a.hr.CloseWrite()
		}
	}()
}

// demux copies the multiplexed output to stdout and stderr until the
// engine ends the stream.
func (a *attachment) demux(stdout, stderr io.Writer) {
	a.demuxed = true
	go func() {
		defer close(a.copyDone)
		_, a.copyErr = stdcopy.StdCopy(stdout, stderr, a.hr.Reader)
	}()
}

// close ends the connection and waits for the stdin writer and the output
// copier, so the request's stdin is not retained and nothing is written
// to the outputs after Spawn returns.
func (a *attachment) close() {
	a.closeOnce.Do(func() { a.hr.Close() })
	if a.fed {
		<-a.stdinDone
	}
	if a.demuxed {
		<-a.copyDone
	}
}
