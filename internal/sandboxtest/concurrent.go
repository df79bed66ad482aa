package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// ConcurrentCalls makes n calls to sb at once, each with its own stdin,
// environment and exit code (a /bin/sh in the sandbox cats its stdin,
// prints $N to stderr and exits $N), and checks every one came back as
// its own. Each call may take up to timeout. It is Conformance's
// concurrency case.
func ConcurrentCalls(t testing.TB, sb sandbox.Sandbox, n int, timeout time.Duration) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			in := fmt.Sprintf("call-%d", i)
			resp, err := sb.Spawn(ctx, sandbox.Request{
				Command: "/bin/sh", Args: []string{"-c", `cat; echo "$N" >&2; exit $N`},
				Stdin: []byte(in), Env: []string{fmt.Sprintf("N=%d", i)}, Timeout: timeout,
			})
			var xe *sandbox.ExitError
			switch {
			case i == 0 && err != nil, i > 0 && (!errors.As(err, &xe) || xe.Code != i):
				errs <- fmt.Errorf("call %d: err %v (kind %v); stdout %q stderr %q", i, err, sandbox.KindOf(err), resp.Stdout, resp.Stderr)
			case string(resp.Stdout) != in || string(resp.Stderr) != fmt.Sprintf("%d\n", i):
				errs <- fmt.Errorf("call %d: stdout %q stderr %q", i, resp.Stdout, resp.Stderr)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
