package dockerbox

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/resident"
)

// With transport api, docker_exec runs its calls through a resident: the
// plugin's own binary, copied into the container and started there once
// as a long-lived exec (as the sandbox's user, in its workdir). Each call
// is then a fork and exec inside the container, not an exec session of
// the engine's, whose runtime start costs tens of milliseconds a call.
// When the resident cannot run (a read-only root filesystem, another
// architecture, a plugin built with cgo, `resident: false`), every call
// is an exec session of its own, as before.

// residentDir is where the resident is installed in a container: made by
// the engine, owned by root, so only root in the container can replace
// it (as only root can replace the /bin/sh the exec path relies on).
const residentDir = "/.promptkit-sandbox"

// residentStartTimeout bounds installing and starting a resident.
const residentStartTimeout = 30 * time.Second

// residentSession is one resident running in the container.
type residentSession struct {
	rc  *resident.Client
	att *attachment
	pid int
}

func (r *residentSession) Client() *resident.Client { return r.rc }

// Close ends the resident's input: it kills what still runs and exits.
func (r *residentSession) Close() { r.att.close() }

// residents keeps the sandbox's resident in its container.
type residents = resident.Keeper[string, *residentSession]

// openResident starts the sandbox's resident when it opens. A failure is
// logged, not returned: the sandbox works without one.
func (s *ExecSandbox) openResident(ctx context.Context) {
	c := s.set.container
	s.res = resident.NewKeeper(s.startResident, s.log)
	if err := s.res.Open(ctx, c); err != nil {
		s.log.Warn("docker_exec runs each call as an exec of its own: no resident", "container", c, "error", err)
	}
}

// residentSession returns a running resident, or nil when calls go
// without one.
func (s *ExecSandbox) residentSession(ctx context.Context) *residentSession {
	if s.res == nil {
		return nil
	}
	sess, _ := s.res.Session(ctx, s.set.container)
	return sess
}

func (s *ExecSandbox) closeResident() {
	if s.res != nil {
		s.res.Close()
	}
}

// startResident installs the resident in container c if it is not
// there yet, starts it and waits for its hello.
func (s *ExecSandbox) startResident(ctx context.Context, c string) (*residentSession, error) {
	ctx, cancel := context.WithTimeout(ctx, residentStartTimeout)
	defer cancel()
	img, err := resident.SelfImage()
	if err != nil {
		return nil, err
	}
	info, err := s.cli.ContainerInspect(ctx, c, client.ContainerInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("inspect container %s: %w", c, err)
	}
	if info.Container.Image != "" {
		ii, err := s.cli.ImageInspect(ctx, info.Container.Image)
		if err == nil && ii.Architecture != "" && ii.Architecture != runtime.GOARCH {
			return nil, fmt.Errorf("container %s runs %s images; the resident is %s", c, ii.Architecture, runtime.GOARCH)
		}
	}
	target := residentDir + "/" + img.Name()
	if err := s.installResident(ctx, img, target); err != nil {
		return nil, err
	}
	ec, err := s.cli.ExecCreate(ctx, c, client.ExecCreateOptions{
		User:         s.set.user,
		WorkingDir:   s.set.workdir,
		Cmd:          []string{target, resident.Flag},
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return nil, fmt.Errorf("create the resident's exec: %w", err)
	}
	hr, err := s.cli.ExecAttach(ctx, ec.ID, client.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("start the resident: %w", err)
	}
	a := newAttachment(hr.HijackedResponse)
	frames, framesW := io.Pipe()
	head := &resident.HeadBuffer{Max: 1024}
	diag := &resident.HeadBuffer{Max: 4096}
	a.demux(io.MultiWriter(head, framesW), diag)
	go func() {
		<-a.copyDone
		framesW.CloseWithError(io.EOF)
	}()
	rc := resident.NewClient(frames, hr.Conn)
	pid, err := rc.Ready(ctx)
	if err != nil {
		a.close()
		msg := strings.TrimSpace(head.String() + " " + diag.String())
		if msg != "" {
			err = fmt.Errorf("%w (the exec said: %q)", err, msg)
		}
		return nil, fmt.Errorf("start the resident %s: %w", target, err)
	}
	s.log.Debug("docker_exec resident running", "container", c, "pid", pid)
	return &residentSession{rc: rc, att: a, pid: pid}, nil
}

// installResident copies the resident into the container unless a file of
// its size is already at target (its name holds its hash).
func (s *ExecSandbox) installResident(ctx context.Context, img resident.Image, target string) error {
	c := s.set.container
	present := func() bool {
		st, err := s.cli.ContainerStatPath(ctx, c, client.ContainerStatPathOptions{Path: target})
		return err == nil && st.Stat.Mode.IsRegular() && st.Stat.Size == img.Size
	}
	if present() {
		return nil
	}
	f, err := os.Open(img.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeResidentTar(pw, f, img.Size, strings.TrimPrefix(target, "/"))) }()
	_, err = s.cli.CopyToContainer(ctx, c, client.CopyToContainerOptions{DestinationPath: "/", Content: pr})
	_ = pr.CloseWithError(io.ErrClosedPipe)
	if err != nil && !present() {
		// Another sandbox may have installed (and started) it meanwhile.
		return fmt.Errorf("copy the resident into container %s: %w", c, err)
	}
	return nil
}

// writeResidentTar writes the archive that installs the resident: its
// directory and the executable, both owned by root.
func writeResidentTar(w io.Writer, bin io.Reader, size int64, name string) error {
	tw := tar.NewWriter(w)
	dir := name[:strings.LastIndexByte(name, '/')+1]
	now := time.Now()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: now}); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: size, ModTime: now}); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, bin, size); err != nil {
		return err
	}
	return tw.Close()
}
