package flock

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestLockFileSerializes: a second holder waits for the first, and gives
// up when its context ends.
func TestLockFileSerializes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); err == nil {
		t.Fatal("a second Lock got the lock while the first held it")
	}

	got := make(chan error, 1)
	go func() {
		unlock2, err := Lock(context.Background(), path)
		if err == nil {
			unlock2()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the waiter returned (%v) before the holder unlocked", err)
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the lock after the holder unlocked")
	}
}
