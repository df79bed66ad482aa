package keeper_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor/keeper"
)

// TestKeeperTakesOverBeforeTheProgramsInitialisers: a start of a
// program as a keeper runs few of the program's package initialisers
// (GODEBUG=inittrace=1 names each), and ends once its host's end of the
// pipe closes, with nothing to remove.
func TestKeeperTakesOverBeforeTheProgramsInitialisers(t *testing.T) {
	plain := exec.Command(os.Args[0], "-test.run=^$")
	normal := initialisers(t, plain)

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	kc := &exec.Cmd{Path: os.Args[0], Args: []string{keeper.Name, filepath.Join(t.TempDir(), "gone")}, ExtraFiles: []*os.File{r}}
	// The host's end closes at once: the keeper goes straight from its
	// initialiser to the removal, and ends.
	_ = w.Close()
	kept := initialisers(t, kc)
	_ = r.Close()
	t.Logf("initialisers run: %d by a plain start, %d by a keeper", normal, kept)
	if kept*2 > normal {
		t.Errorf("a keeper ran %d package initialisers, a plain start %d: want fewer than half", kept, normal)
	}
}

// initialisers runs cmd to its end (within ten seconds, exit 0) and
// counts the package initialisers it ran.
func initialisers(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.Bytes())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not end within 10s", cmd.Args)
	}
	n := 0
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		if strings.HasPrefix(line, "init ") {
			n++
		}
	}
	return n
}
