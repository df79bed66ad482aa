package tracing

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// scope names the instrumentation scope of the spans Start makes.
const scope = "github.com/altairalabs/promptkit-sandbox/shared/tracing"

// StartCall starts the span of a backend's call in a sandbox of mode
// (SpanName names it) as a child of the span ctx carries, with that
// span's provider: a backend needs no provider of its own. When ctx
// carries no recording span — tracing is off, or the trace is not
// sampled — it makes none and costs next to nothing.
func StartCall(ctx context.Context, mode, command string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, noSpan
	}
	return parent.TracerProvider().Tracer(scope).Start(ctx, SpanName(mode), trace.WithAttributes(ModeAttrs(mode, command)...))
}

// noSpan is the span of a call that is not traced: every method a no-op.
var noSpan = trace.SpanFromContext(context.Background())

// CommandAttrs describe the command a span runs by its file name only:
// its path and arguments may carry what a trace must not.
func CommandAttrs(command string) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("process.executable.name", filepath.Base(command))}
}

// End records how a call went on span and ends it: the exit code of a
// command that ran, the error kind of one that failed. The error's
// message stays out: it may quote the command's output.
func End(span trace.Span, err error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	var xe *sandbox.ExitError
	switch {
	case err == nil:
		span.SetAttributes(attribute.Int("process.exit.code", 0))
	case errors.As(err, &xe):
		span.SetAttributes(attribute.Int("process.exit.code", xe.Code))
	default:
		span.SetAttributes(attribute.String("error.type", sandbox.KindOf(err).String()))
		span.SetStatus(codes.Error, sandbox.KindOf(err).String())
	}
	span.End()
}

// SpanName is the name of the span of a call in a sandbox of mode:
// "docker_exec" is "docker.exec", and a mode without a verb, "direct",
// is "direct.exec".
func SpanName(mode string) string {
	if !strings.Contains(mode, "_") {
		return mode + ".exec"
	}
	return strings.Replace(mode, "_", ".", 1)
}

// ModeAttrs describe a call in a sandbox of mode, running command.
func ModeAttrs(mode, command string) []attribute.KeyValue {
	return append(CommandAttrs(command), attribute.String("promptkit.sandbox.mode", mode))
}
