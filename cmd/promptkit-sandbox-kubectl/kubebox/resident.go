package kubebox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/resident"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// With the native transport, kubectl_exec runs its calls through a
// resident: the plugin's own binary, copied into the container (over an
// exec's stdin) and started there once as a long-lived exec. Each call is
// then a fork and exec inside the container instead of an exec session:
// no API request, no upgrade, no runtime exec per call. When the resident
// cannot run (no writable temporary directory, another architecture, a
// plugin built with cgo, `resident: false`), each call is an exec session
// of its own, as before.

// residentScript finds ($3 = check) or installs ($3 = install, the binary
// on stdin) the resident named $1 of $2 bytes in a directory of the
// container's user's own, and prints its path. The directory is made
// private (0700) and must be owned by that user; the file is written
// under a temporary name and renamed into place whole.
const residentScript = `d="${TMPDIR:-/tmp}/.promptkit-sandbox-$(id -u 2>/dev/null || echo 0)"; f="$d/$1"
size() { n=$(wc -c < "$1") && [ "$((n))" -eq "$2" ]; }
if [ "$3" = check ]; then [ -f "$f" ] && [ -x "$f" ] && [ -O "$d" ] && size "$f" "$2" && { echo "$f"; exit 0; }; exit 3; fi
umask 077; mkdir -p "$d" && [ -O "$d" ] && chmod 700 "$d" && cat > "$f.$$" && chmod 700 "$f.$$" && mv -f "$f.$$" "$f" && size "$f" "$2" && echo "$f"`

// residentStartTimeout bounds installing and starting a resident.
const residentStartTimeout = time.Minute

// residentBackstop is added to a call's timeout for the resident's own
// deadline: the plugin's comes first and kills the call.
const residentBackstop = 5 * time.Second

// residentSession is one resident running in a target.
type residentSession struct {
	t      target
	rc     *resident.Client
	stdin  *io.PipeWriter
	cancel context.CancelFunc
	done   chan struct{} // the exec has returned
	pid    int
}

func (r *residentSession) Client() *resident.Client { return r.rc }

// Close ends the resident's input (it kills what still runs and exits)
// and then the exec.
func (r *residentSession) Close() {
	r.stdin.Close()
	select {
	case <-r.done:
	case <-time.After(streamGrace):
	}
	r.cancel()
	<-r.done
}

// residents keeps the sandbox's resident in its current target; a
// selector that moves the sandbox to another pod moves the resident too.
type residents = resident.Keeper[target, *residentSession]

// openResident starts the resident when the sandbox opens; a failure is
// logged, not returned.
func (s *Sandbox) openResident(ctx context.Context, t target) {
	s.res = resident.NewKeeper(s.startResident, logger.With("sandbox", s.name, "mode", Mode))
	if err := s.res.Open(ctx, t); err != nil {
		logger.Warn("kubectl_exec runs each call as an exec of its own: no resident", "sandbox", s.name, "target", t.String(), "error", err)
	}
}

func (s *Sandbox) closeResident() {
	if s.res != nil {
		s.res.Close()
	}
}

// residentFor returns a running resident in t, or nil when the call goes
// without one.
func (s *Sandbox) residentFor(ctx context.Context, t target) *residentSession {
	if s.res == nil {
		return nil
	}
	sess, _ := s.res.Session(ctx, t)
	return sess
}

// startResident installs the resident in t when it is not there yet,
// starts it and waits for its hello.
func (s *Sandbox) startResident(ctx context.Context, t target) (*residentSession, error) {
	ctx, cancel := context.WithTimeout(ctx, residentStartTimeout)
	defer cancel()
	img, err := resident.SelfImage()
	if err != nil {
		return nil, err
	}
	path, err := s.installResident(ctx, t, img)
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	head := &resident.HeadBuffer{Max: 1024}
	diag := &resident.HeadBuffer{Max: 4096}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := s.c.exec(sctx, t, []string{path, resident.Flag}, inR, io.MultiWriter(head, outW), diag)
		if err == nil {
			err = io.EOF
		}
		outW.CloseWithError(err)
		inR.Close()
	}()
	rc := resident.NewClient(outR, inW)
	sess := &residentSession{t: t, rc: rc, stdin: inW, cancel: stop, done: done}
	pid, err := rc.Ready(ctx)
	if err != nil {
		sess.Close()
		if msg := strings.TrimSpace(head.String() + " " + diag.String()); msg != "" {
			err = fmt.Errorf("%w (the exec said: %q)", err, msg)
		}
		return nil, fmt.Errorf("start the resident %s in %s: %w", path, t, err)
	}
	sess.pid = pid
	logger.Debug("kubectl_exec resident running", "sandbox", s.name, "target", t.String(), "pid", pid)
	return sess, nil
}

// installResident returns the resident's path in t, copying it there
// first when it is missing.
func (s *Sandbox) installResident(ctx context.Context, t target, img resident.Image) (string, error) {
	argv := func(mode string) []string {
		return []string{"/bin/sh", "-c", residentScript, "pks-resident", img.Name(), strconv.FormatInt(img.Size, 10), mode}
	}
	var out, errb syncBuffer
	code, err := s.c.exec(ctx, t, argv("check"), nil, &out, &errb)
	if err != nil {
		return "", fmt.Errorf("look for the resident in %s: %w", t, err)
	}
	if code == 0 {
		return strings.TrimSpace(out.String()), nil
	}
	f, err := os.Open(img.Path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var out2, errb2 bytes.Buffer
	code, err = s.c.exec(ctx, t, argv("install"), f, &out2, &errb2)
	if err != nil {
		return "", fmt.Errorf("copy the resident into %s: %w", t, err)
	}
	if code != 0 {
		return "", fmt.Errorf("copy the resident into %s: exit %d: %s", t, code, strings.TrimSpace(errb2.String()))
	}
	return strings.TrimSpace(out2.String()), nil
}

// runResident runs a call through the resident; env is the call's,
// merged over the sandbox's.
func (s *Sandbox) runResident(ctx context.Context, sess *residentSession, req sandbox.Request, env []string, what string, timeout time.Duration, stdout, stderr io.Writer) (int, error) {
	res, err := sess.rc.Run(ctx, resident.Call{
		Command: req.Command,
		Args:    req.Args,
		Env:     env,
		Stdin:   req.Stdin,
		Timeout: timeout + residentBackstop,
		// One byte past the cap lets the call's own cap see the cut.
		OutputLimit: s.set.outputLimit + 1,
	}, stdout, stderr)
	switch {
	case err == nil:
		return res.Code, nil
	case ctx.Err() != nil:
		return 0, sandbox.ContextError(ctx, what, timeout)
	case errors.Is(err, resident.ErrEnded):
		if derr := s.diagnose(ctx, sess.t, nil, ""); derr != nil {
			return 0, derr
		}
		return 0, sandbox.NewError(sandbox.KindTransport, fmt.Sprintf("%s: the resident in %s", what, sess.t), err)
	case sandbox.KindOf(err) == sandbox.KindStart:
		var se *sandbox.Error
		if errors.As(err, &se) && strings.HasSuffix(se.Msg, "not found (or not executable)") {
			return 0, sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s: not found (or not executable) in %s", what, sess.t), nil)
		}
		return 0, sandbox.NewError(sandbox.KindStart, fmt.Sprintf("%s in %s", err, sess.t), nil)
	}
	return 0, err
}
