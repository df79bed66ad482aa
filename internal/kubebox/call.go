package kubebox

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/altairalabs/promptkit-sandbox/internal/remoteproc"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// podTarget is one pod's container as remoteproc's engine reaches it,
// through the sandbox's cluster client.
type podTarget struct {
	s *Sandbox
	t target
}

var (
	_ remoteproc.Target        = podTarget{}
	_ remoteproc.ClientFailure = podTarget{}
)

func (p podTarget) String() string { return p.t.String() }

func (p podTarget) Exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	return p.s.c.exec(ctx, p.t, argv, stdin, stdout, stderr)
}

func (p podTarget) Explain(ctx context.Context, err error, msg string) error {
	return p.s.diagnose(ctx, p.t, err, msg)
}

// ClientFailure recognises kubectl's own failure in its words; the
// native transport has no client words.
func (p podTarget) ClientFailure(msg string) error {
	if p.s.set.transport != TransportCLI || kubectlReason(lastLine(msg)) == apiOther {
		return nil
	}
	return p.s.diagnose(context.Background(), p.t, nil, msg)
}

// errPodGone marks a failure because the pod no longer exists or runs.
var errPodGone = errors.New("the pod went away")

// diagnose explains a failed exec: it asks the API server about the pod,
// whose state usually says why (gone, stopped, no such container);
// otherwise the exec's own error (err, or msg from the client) is the
// reason. It returns nil when it finds nothing wrong and has nothing to
// say.
func (s *Sandbox) diagnose(ctx context.Context, t target, err error, msg string) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), remoteproc.CleanupTimeout)
	defer cancel()
	pod, gerr := s.c.getPod(dctx, t.ns, t.pod)
	switch {
	case reasonOf(gerr) == apiNotFound:
		return &goneError{sandbox.NewError(sandbox.KindStart, fmt.Sprintf("pod %s not found in namespace %s", t.pod, t.ns), nil)}
	case gerr == nil:
		if _, terr := s.targetOf(pod, false); terr != nil {
			return &goneError{terr}
		}
	}
	if err == nil && msg != "" {
		ae := messageErr(s.c.server(), lastLine(msg), nil)
		if ae.reason == apiOther {
			return sandbox.NewError(sandbox.KindStart, fmt.Sprintf("exec in %s: %s", t, ae.msg), nil)
		}
		err = ae
	}
	if err == nil {
		if gerr != nil {
			return s.apiErr("exec in "+t.String(), gerr)
		}
		return nil
	}
	return s.apiErr("exec in "+t.String(), err)
}

// goneError is a sandbox error that also matches errPodGone.
type goneError struct{ err error }

func (e *goneError) Error() string        { return e.err.Error() }
func (e *goneError) Unwrap() error        { return e.err }
func (e *goneError) Is(target error) bool { return target == errPodGone }
