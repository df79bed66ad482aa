package kubebox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/internal/resident"
)

// With the native transport, kubectl_exec runs its calls through a
// resident: the plugin's own binary, copied into the container (over an
// exec's stdin) and started there once as a long-lived exec. Each call is
// then a fork and exec inside the container instead of an exec session:
// no API request, no upgrade, no runtime exec per call. When the resident
// cannot run (no writable temporary directory, another architecture, a
// plugin built with cgo, `resident: false`), each call is an exec session
// of its own, as before.

// residentScript runs ($3 = run) or installs ($3 = install, the binary
// on stdin) the resident named $1 of $2 bytes, kept in a directory of the
// container's user's own. run execs it with the argument $4 when it is
// there whole, and otherwise says residentMissing and exits 3: so the
// usual start, with the resident installed, is one exec. The directory is
// made private (0700) and must be owned by that user; the file is written
// under a temporary name and renamed into place whole. The size comes
// from ls -ln (wc -c, which reads the whole file, costs a busybox
// hundreds of milliseconds on a plugin-sized binary; it is the fallback
// where ls is missing).
const residentScript = `d="${TMPDIR:-/tmp}/.promptkit-sandbox-$(id -u 2>/dev/null || echo 0)"; f="$d/$1"
size() { p=$1 w=$2; l=$(ls -ln "$p" 2>/dev/null) && set -- $l && [ "$5" = "$w" ] || { n=$(wc -c < "$p") && [ "$((n))" -eq "$w" ]; }; }
if [ "$3" = run ]; then [ -f "$f" ] && [ -x "$f" ] && [ -O "$d" ] && size "$f" "$2" && exec "$f" "$4"; echo "` + residentMissing + `"; exit 3; fi
umask 077; mkdir -p "$d" && [ -O "$d" ] && chmod 700 "$d" && cat > "$f.$$" && chmod 700 "$f.$$" && mv -f "$f.$$" "$f" && size "$f" "$2"`

// residentMissing is what residentScript says when the resident is not
// installed yet.
const residentMissing = "promptkit-sandbox: no resident installed"

// errNotInstalled is a resident start that found none installed.
var errNotInstalled = errors.New("resident not installed")

// residentStartTimeout bounds installing and starting a resident.
const residentStartTimeout = time.Minute

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
	_ = r.stdin.Close()
	select {
	case <-r.done:
	case <-time.After(remoteproc.StreamGrace):
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
	s.res = resident.NewKeeper(s.startResident, s.log)
	if err := s.res.Open(ctx, t); err != nil {
		s.log.Warn("kubectl_exec runs each call as an exec of its own: no resident", "target", t.String(), "error", err)
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

// startResident starts the resident in t, installing it first when it
// is not there yet, and waits for its hello.
func (s *Sandbox) startResident(ctx context.Context, t target) (*residentSession, error) {
	ctx, cancel := context.WithTimeout(ctx, residentStartTimeout)
	defer cancel()
	img, err := resident.SelfImage()
	if err != nil {
		return nil, err
	}
	sess, err := s.launchResident(ctx, t, img)
	if errors.Is(err, errNotInstalled) {
		if err := s.installResident(ctx, t, img); err != nil {
			return nil, err
		}
		sess, err = s.launchResident(ctx, t, img)
	}
	if err != nil {
		return nil, fmt.Errorf("start the resident %s in %s: %w", img.Name(), t, err)
	}
	s.log.Debug("kubectl_exec resident running", "target", t.String(), "pid", sess.pid)
	return sess, nil
}

// residentArgv is the command line of residentScript in mode.
func residentArgv(img resident.Image, mode string) []string {
	return []string{"/bin/sh", "-c", residentScript, "pks-resident", img.Name(), strconv.FormatInt(img.Size, 10), mode, resident.Flag}
}

// launchResident runs the installed resident in t as a long-lived exec
// and waits for its hello; errNotInstalled when there is none.
func (s *Sandbox) launchResident(ctx context.Context, t target, img resident.Image) (*residentSession, error) {
	sctx, stop := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	head := &resident.HeadBuffer{Max: 1024}
	diag := &resident.HeadBuffer{Max: 4096}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Once the script has said there is no resident, the exec has
		// nothing more to say: end it rather than wait for the stream to
		// close, which an API server can take seconds to do.
		missing := &saidMissing{stop: stop}
		_, err := s.c.exec(sctx, t, residentArgv(img, "run"), inR, io.MultiWriter(head, missing, outW), diag)
		if err == nil {
			err = io.EOF
		}
		outW.CloseWithError(err)
		_ = inR.Close()
	}()
	rc := resident.NewClient(outR, inW)
	sess := &residentSession{t: t, rc: rc, stdin: inW, cancel: stop, done: done}
	pid, err := rc.Ready(ctx)
	if err != nil {
		sess.Close()
		if strings.HasPrefix(head.String(), residentMissing) {
			return nil, errNotInstalled
		}
		if msg := strings.TrimSpace(head.String() + " " + diag.String()); msg != "" {
			err = fmt.Errorf("%w (the exec said: %q)", err, msg)
		}
		return nil, err
	}
	sess.pid = pid
	return sess, nil
}

// saidMissing stops a resident's exec once its output starts with
// residentMissing. It looks at those first bytes only: every frame of a
// running resident passes through it afterwards, at the cost of a
// comparison. One goroutine writes to it (the exec's stdout copy).
type saidMissing struct {
	stop context.CancelFunc
	seen []byte
}

func (m *saidMissing) Write(p []byte) (int, error) {
	const want = residentMissing + "\n"
	if room := len(want) - len(m.seen); room > 0 {
		m.seen = append(m.seen, p[:min(room, len(p))]...)
		if string(m.seen) == want {
			m.stop()
		}
	}
	return len(p), nil
}

// installResident copies the resident into t.
func (s *Sandbox) installResident(ctx context.Context, t target, img resident.Image) error {
	f, err := os.Open(img.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	errb := &resident.HeadBuffer{Max: 4096}
	code, err := s.c.exec(ctx, t, residentArgv(img, "install"), f, io.Discard, errb)
	if err != nil {
		return fmt.Errorf("copy the resident into %s: %w", t, err)
	}
	if code != 0 {
		return fmt.Errorf("copy the resident into %s: exit %d: %s", t, code, strings.TrimSpace(errb.String()))
	}
	return nil
}
