package sandbox

import (
	"context"
	"testing"
	"time"
)

func TestEnterSetsTheDeadlineOnce(t *testing.T) {
	const timeout = time.Minute
	ctx, cancel := Enter(context.Background(), timeout)
	defer cancel()
	at, ok := deadlineOf(ctx, timeout)
	if !ok {
		t.Fatal("no deadline after Enter")
	}
	if d, _ := ctx.Deadline(); !d.Equal(at.Add(Grace)) {
		t.Errorf("ctx ends at %v, want the deadline plus Grace (%v)", d, at.Add(Grace))
	}
	time.Sleep(10 * time.Millisecond)
	inner, cancelInner := Enter(ctx, timeout)
	defer cancelInner()
	if again, _ := deadlineOf(inner, timeout); !again.Equal(at) {
		t.Errorf("a layer below moved the deadline from %v to %v", at, again)
	}
	if r := Remaining(inner, timeout); r >= timeout || r < timeout-time.Second {
		t.Errorf("Remaining = %v, want a little under %v", r, timeout)
	}
	// Another call made under this one's context has a deadline of its own.
	if _, ok := deadlineOf(ctx, time.Second); ok {
		t.Error("a call with another timeout found this call's deadline")
	}
	if r := Remaining(ctx, time.Second); r != time.Second {
		t.Errorf("Remaining for another call = %v, want all of its 1s", r)
	}
}

func TestEnterWithoutTimeoutSetsNothing(t *testing.T) {
	ctx, cancel := Enter(context.Background(), 0)
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Error("a call with the sandbox's default timeout got a deadline from Enter")
	}
	if r := Remaining(ctx, 0); r != 0 {
		t.Errorf("Remaining = %v, want 0", r)
	}
	ectx, ecancel := Expire(ctx, 0)
	defer ecancel()
	if _, ok := ectx.Deadline(); ok {
		t.Error("Expire set a deadline for a call without a timeout")
	}
}

func TestExpireEndsAtTheDeadline(t *testing.T) {
	at := time.Now().Add(time.Hour)
	ctx, cancel := EnterAt(context.Background(), at, 2*time.Hour)
	defer cancel()
	ectx, ecancel := Expire(ctx, 2*time.Hour)
	defer ecancel()
	if d, _ := ectx.Deadline(); !d.Equal(at) {
		t.Errorf("Expire ends at %v, want the deadline %v", d, at)
	}
	// A deadline already past: the call has no time left.
	past, cancelPast := EnterAt(context.Background(), time.Now().Add(-time.Second), time.Minute)
	defer cancelPast()
	if r := Remaining(past, time.Minute); r > -time.Second+time.Millisecond*100 {
		t.Errorf("Remaining = %v, want about -1s", r)
	}
	pctx, pcancel := Expire(past, time.Minute)
	defer pcancel()
	if pctx.Err() == nil {
		t.Error("Expire of a passed deadline is not done")
	}
}
