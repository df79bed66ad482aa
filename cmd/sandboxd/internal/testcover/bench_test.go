package testcover

import (
	"context"
	"testing"
	"time"
)

// BenchmarkFileComputed is a first ask: build the package's tests with
// coverage and run each of its 3 tests.
func BenchmarkFileComputed(b *testing.B) {
	ws, env := fixture(b), goEnv(b)
	for b.Loop() {
		c := New(ws, Options{Env: env})
		if _, err := c.File(context.Background(), "calc.go", 2*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFileCached is every later ask: hash the package's files and
// answer from the cache.
func BenchmarkFileCached(b *testing.B) {
	ws, env := fixture(b), goEnv(b)
	c := New(ws, Options{Env: env})
	if _, err := c.File(context.Background(), "calc.go", 2*time.Minute); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		fc, err := c.File(context.Background(), "calc.go", 2*time.Minute)
		if err != nil || !fc.Cached {
			b.Fatalf("not from the cache: %v", err)
		}
	}
}
