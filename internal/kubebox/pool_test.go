package kubebox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// awaitWarm waits until the sandbox's engine holds all its warm
// sessions ready, or ctx ends.
func awaitWarm(ctx context.Context, sb *Sandbox) {
	for ctx.Err() == nil {
		if ready, size := sb.engine().Warm(); ready >= size {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// warmSize is how many warm sessions the sandbox keeps.
func warmSize(sb *Sandbox) int {
	_, size := sb.engine().Warm()
	return size
}

// wrappers counts the wrapper processes in a pod.
func (c *testCluster) wrappers(t *testing.T, pod string) int {
	t.Helper()
	return strings.Count(c.exec(t, pod, "ps", "-o", "args"), " pks-wrapper\n")
}

func TestWarmSessionsServeCallsAndCloseEndsThem(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, map[string]any{"warm": 3, "resident": false})
		awaitWarm(ctxTimeout(t, time.Minute), sb)
		if n := c.wrappers(t, testPod); n != 3 {
			t.Fatalf("%d wrappers waiting, want 3", n)
		}
		for i := range 5 {
			resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "echo", Args: []string{fmt.Sprint(i)}, Env: []string{"A=" + fmt.Sprint(i)}})
			if err != nil || string(resp.Stdout) != fmt.Sprintf("%d\n", i) {
				t.Fatalf("call %d: %v %q", i, err, resp.Stdout)
			}
		}
		if err := sb.Close(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for c.wrappers(t, testPod) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("wrappers left after Close:\n%s", c.ps(t, testPod))
			}
			time.Sleep(20 * time.Millisecond)
		}
		c.awaitNoLeftovers(t, testPod)
	})
}

func TestWarmSessionCutBeforeItsCall(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, map[string]any{"warm": 2, "resident": false})
		awaitWarm(ctxTimeout(t, time.Minute), sb)
		// The waiting wrappers die (an OOM kill, a node problem): the
		// calls still run, in sessions of their own.
		c.exec(t, testPod, "sh", "-c", `for p in /proc/[0-9]*; do case "$(cat $p/cmdline 2>/dev/null | tr '\0' ' ')" in *pks-wrappe[r]*) kill -9 ${p#/proc/};; esac; done`)
		for i := range 3 {
			resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "echo", Args: []string{"still here"}})
			if err != nil || string(resp.Stdout) != "still here\n" {
				t.Fatalf("call %d: %v %q", i, err, resp.Stdout)
			}
		}
	})
}

func TestWithoutWarmSessions(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	eachTransport(t, func(t *testing.T, tr string) {
		sb := c.open(t, tr, map[string]any{"warm": 0, "resident": false})
		if warmSize(sb) != 0 {
			t.Fatal("a pool with warm: 0")
		}
		resp, err := sb.Spawn(ctxTimeout(t, time.Minute), sandbox.Request{Command: "/bin/sh", Args: []string{"-c", "cat; exit 3"}, Stdin: []byte("in")})
		var xe *sandbox.ExitError
		if !errors.As(err, &xe) || xe.Code != 3 || string(resp.Stdout) != "in" {
			t.Fatalf("err %v stdout %q", err, resp.Stdout)
		}
		if n := c.wrappers(t, testPod); n != 0 {
			t.Fatalf("%d wrappers waiting with warm: 0", n)
		}
	})
}
