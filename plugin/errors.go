package plugin

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/status"

	sandboxpb "github.com/altairalabs/promptkit-sandbox/shared/proto"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Spawn errors cross the wire as a kind, the message, and for exits the
// code and signal. The host rebuilds an error that answers errors.Is and
// errors.As as the backend's did, with the same text; the wrapped causes
// themselves stay in the plugin.

var kindToWire = map[sandbox.Kind]sandboxpb.ErrorKind{
	sandbox.KindUnknown:   sandboxpb.ErrorKind_ERROR_KIND_UNKNOWN,
	sandbox.KindTimeout:   sandboxpb.ErrorKind_ERROR_KIND_TIMEOUT,
	sandbox.KindExit:      sandboxpb.ErrorKind_ERROR_KIND_EXIT,
	sandbox.KindStart:     sandboxpb.ErrorKind_ERROR_KIND_START,
	sandbox.KindTransport: sandboxpb.ErrorKind_ERROR_KIND_TRANSPORT,
	sandbox.KindCanceled:  sandboxpb.ErrorKind_ERROR_KIND_CANCELED,
}

var kindFromWire = map[sandboxpb.ErrorKind]sandbox.Kind{
	sandboxpb.ErrorKind_ERROR_KIND_TIMEOUT:   sandbox.KindTimeout,
	sandboxpb.ErrorKind_ERROR_KIND_EXIT:      sandbox.KindExit,
	sandboxpb.ErrorKind_ERROR_KIND_START:     sandbox.KindStart,
	sandboxpb.ErrorKind_ERROR_KIND_TRANSPORT: sandbox.KindTransport,
	sandboxpb.ErrorKind_ERROR_KIND_CANCELED:  sandbox.KindCanceled,
}

// resultOf encodes what a backend's Spawn returned.
func resultOf(resp sandbox.Response, err error) *sandboxpb.SpawnResult {
	res := &sandboxpb.SpawnResult{
		StdoutTruncated: resp.StdoutTruncated,
		StderrTruncated: resp.StderrTruncated,
	}
	if err == nil {
		return res
	}
	res.Kind = kindToWire[sandbox.KindOf(err)]
	if res.Kind == sandboxpb.ErrorKind_ERROR_KIND_NONE {
		res.Kind = sandboxpb.ErrorKind_ERROR_KIND_UNKNOWN // a Kind added after this table
	}
	res.Message = err.Error()
	var xe *sandbox.ExitError
	if errors.As(err, &xe) {
		res.ExitCode = int32(xe.Code) // #nosec G115 -- an exit status: 0-255, or 128+N for signal N
		res.Signal = xe.Signal
	}
	return res
}

// errorOf decodes a result into the error Spawn returns, nil on success.
func errorOf(res *sandboxpb.SpawnResult) error {
	if res.GetKind() == sandboxpb.ErrorKind_ERROR_KIND_NONE {
		return nil
	}
	kind, ok := kindFromWire[res.GetKind()]
	switch {
	case !ok:
		// KindUnknown, or a kind from a newer protocol: an error nothing
		// classifies, as it was in the plugin.
		return errors.New(messageOr(res.GetMessage(), "plugin reported an unclassified error"))
	case kind == sandbox.KindExit && (res.GetExitCode() != 0 || res.GetSignal() != ""):
		xe := &sandbox.ExitError{Code: int(res.GetExitCode()), Signal: res.GetSignal()}
		if res.GetMessage() == "" || res.GetMessage() == xe.Error() {
			return xe
		}
		// The backend wrapped the exit ("hook x: process exited with
		// code 3"): keep its words and the *ExitError underneath.
		return &wrappedError{msg: res.GetMessage(), err: xe}
	}
	// A KindExit without a code was a *sandbox.Error of that kind, not an
	// *ExitError, in the plugin too.
	return &sandbox.Error{Kind: kind, Msg: res.GetMessage()}
}

func messageOr(msg, fallback string) string {
	if msg == "" {
		return fallback
	}
	return msg
}

// wrappedError is an error with the plugin's text and a typed cause.
type wrappedError struct {
	msg string
	err error
}

func (e *wrappedError) Error() string { return e.msg }
func (e *wrappedError) Unwrap() error { return e.err }

// statusCause keeps a gRPC error as the cause but words it as the
// status's own message, without the "rpc error: code = ..." framing.
func statusCause(err error) error {
	st, ok := status.FromError(err)
	if !ok || st.Message() == "" {
		return err
	}
	return &wrappedError{msg: st.Message(), err: err}
}

// ErrConnection marks the failure of the hop itself: the connection to
// the plugin process broke, the process is gone, or it broke the
// protocol. Such an error is also a sandbox.ErrTransport. A backend's own
// transport error (an engine or API server that did not answer) is not an
// ErrConnection: the plugin process is fine and goes on serving its other
// calls, so only an ErrConnection may make a host restart it.
var ErrConnection = errors.New("the connection to the plugin failed")

// connectionError reports that the plugin process, or the way to it,
// failed: the message names the plugin so a log line says which one.
func connectionError(plugin, what string, cause error) error {
	return &hopError{transportError(plugin, what, cause)}
}

// hopError is a transport error of the hop; see ErrConnection.
type hopError struct{ err *sandbox.Error }

func (e *hopError) Error() string        { return e.err.Error() }
func (e *hopError) Unwrap() error        { return e.err }
func (e *hopError) Is(target error) bool { return target == ErrConnection }

// transportError reports that the plugin failed a request without the
// connection failing (it answered with a status no call expects).
func transportError(plugin, what string, cause error) *sandbox.Error {
	return &sandbox.Error{Kind: sandbox.KindTransport, Msg: fmt.Sprintf("plugin %s: %s", plugin, what), Err: cause}
}
