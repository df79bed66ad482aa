package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

func TestErrorKindsMatchSentinels(t *testing.T) {
	cases := []struct {
		name string
		err  error
		is   []error
		not  []error
		kind Kind
	}{
		{
			name: "timeout",
			err:  NewError(KindTimeout, "hook x: timed out after 3s", nil),
			is:   []error{ErrTimeout, context.DeadlineExceeded},
			not:  []error{ErrStart, ErrTransport, ErrCanceled, context.Canceled},
			kind: KindTimeout,
		},
		{
			name: "start",
			err:  NewError(KindStart, "exec \"nope\"", io.ErrUnexpectedEOF),
			is:   []error{ErrStart, io.ErrUnexpectedEOF},
			not:  []error{ErrTimeout, context.DeadlineExceeded, ErrTransport},
			kind: KindStart,
		},
		{
			name: "transport",
			err:  fmt.Errorf("spawn: %w", NewError(KindTransport, "plugin exited", nil)),
			is:   []error{ErrTransport},
			not:  []error{ErrStart, ErrTimeout},
			kind: KindTransport,
		},
		{
			name: "canceled",
			err:  NewError(KindCanceled, "cancelled", nil),
			is:   []error{ErrCanceled, context.Canceled},
			not:  []error{context.DeadlineExceeded, ErrTimeout},
			kind: KindCanceled,
		},
		{
			name: "exit",
			err:  fmt.Errorf("hook: %w", &ExitError{Code: 3}),
			not:  []error{ErrStart, ErrTimeout, ErrTransport, ErrCanceled},
			kind: KindExit,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range tc.is {
				if !errors.Is(tc.err, target) {
					t.Errorf("errors.Is(%v, %v) = false, want true", tc.err, target)
				}
			}
			for _, target := range tc.not {
				if errors.Is(tc.err, target) {
					t.Errorf("errors.Is(%v, %v) = true, want false", tc.err, target)
				}
			}
			if got := KindOf(tc.err); got != tc.kind {
				t.Errorf("KindOf = %v, want %v", got, tc.kind)
			}
		})
	}
}

func TestSentinelsAreDistinctKinds(t *testing.T) {
	// Two non-sentinel errors of one kind must not match each other: only
	// the package sentinels act as kind wildcards.
	a := NewError(KindStart, "a", nil)
	b := NewError(KindStart, "b", nil)
	if errors.Is(a, b) {
		t.Fatal("errors.Is matched two distinct non-sentinel errors")
	}
}

func TestExitErrorAs(t *testing.T) {
	err := fmt.Errorf("run: %w", &ExitError{Code: 137, Signal: "killed"})
	var xe *ExitError
	if !errors.As(err, &xe) {
		t.Fatal("errors.As(*ExitError) = false")
	}
	if xe.Code != 137 || xe.Signal != "killed" {
		t.Fatalf("got %+v", xe)
	}
	if got, want := xe.Error(), "process killed by signal: killed (exit code 137)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if got, want := (&ExitError{Code: 2}).Error(), "process exited with code 2"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestKindOfStandardErrors(t *testing.T) {
	if got := KindOf(context.DeadlineExceeded); got != KindTimeout {
		t.Errorf("KindOf(DeadlineExceeded) = %v", got)
	}
	if got := KindOf(fmt.Errorf("x: %w", context.Canceled)); got != KindCanceled {
		t.Errorf("KindOf(Canceled) = %v", got)
	}
	if got := KindOf(io.EOF); got != KindUnknown {
		t.Errorf("KindOf(EOF) = %v", got)
	}
	if got := KindOf(nil); got != KindUnknown {
		t.Errorf("KindOf(nil) = %v", got)
	}
}

func TestErrorf(t *testing.T) {
	err := Errorf(KindStart, "image %q is not present locally: %w", "x:1", io.EOF)
	if got, want := err.Error(), `image "x:1" is not present locally: EOF`; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, io.EOF) || !errors.Is(err, ErrStart) {
		t.Fatalf("Errorf lost its cause or kind: %v", err)
	}
}

func TestContextError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err := ContextError(ctx, "hook pii", 3*time.Second)
	if got, want := err.Error(), "hook pii: timed out after 3s"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrTimeout) {
		t.Fatal("timeout not classified")
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	err = ContextError(ctx, "hook pii", 3*time.Second)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrCanceled) {
		t.Fatalf("cancel not classified: %v", err)
	}
}

func TestKindString(t *testing.T) {
	if KindTransport.String() != "transport" || Kind(99).String() != "Kind(99)" {
		t.Fatal("Kind.String")
	}
}

func TestDone(t *testing.T) {
	if Done(context.Background()) {
		t.Error("Done(Background) = true")
	}
	live, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if Done(live) {
		t.Error("Done of a context an hour from its deadline = true")
	}
	// A deadline already past: the context may not know it yet, Done
	// does, and once it returns the context agrees.
	past, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel2()
	if !Done(past) || !errors.Is(past.Err(), context.DeadlineExceeded) {
		t.Errorf("Done of a context past its deadline: err %v", past.Err())
	}
	if KindOf(ContextError(past, "x", time.Second)) != KindTimeout {
		t.Error("ContextError after Done is not a timeout")
	}
}
