package shell

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// nobody is the user and group a credential test runs its process as.
const nobody = 65534

// TestCredential: under each containment the process runs as the
// credential's user and groups and no others; under a supervisor it can
// neither signal the supervisor (which stays the host's user) nor read
// the host's memory.
func TestCredential(t *testing.T) {
	proctest.RequireRoot(t)
	cred := &syscall.Credential{Uid: nobody, Gid: nobody}
	run := func(t *testing.T) {
		resp, err := Run(context.Background(), sh(`id -u; id -g; id -G; kill -0 $PPID 2>/dev/null && echo signalled-parent; cat /proc/`+strconv.Itoa(os.Getpid())+`/environ >/dev/null 2>&1 && echo read-host; true`),
			Options{Timeout: time.Minute, Credential: cred})
		if err != nil {
			t.Fatalf("err = %v (stderr %q)", err, resp.Stderr)
		}
		if got, want := string(resp.Stdout), "65534\n65534\n65534\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
	}
	forEachContainment(t, run)
	t.Run("group", func(t *testing.T) {
		t.Setenv(ContainmentEnv, string(ContainGroup))
		run(t)
	})
}
