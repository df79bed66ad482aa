package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentSessions runs sessions side by side over both HTTP
// transports, each writing, reading, editing, searching and running its
// own files, and checks every result; -race watches the shared state
// (ledgers, the file lock, the shell manager). Under -short each session
// runs 2 rounds instead of 5.
func TestConcurrentSessions(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, Config{})
	const sessions = 8
	rounds := 5
	if testing.Short() {
		rounds = 2
	}
	var wg sync.WaitGroup
	errs := make(chan string, sessions*rounds)
	for i := range sessions {
		tr := streamable
		if i%2 == 1 {
			tr = sse
		}
		cs := d.connect(t, tr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				name := fmt.Sprintf("s%d/r%d.txt", i, r)
				want := fmt.Sprintf("session %d round %d\n", i, r)
				steps := []struct {
					tool string
					args map[string]any
					want string
				}{
					{"Write", map[string]any{"file_path": name, "content": want}, "Wrote"},
					{"Read", map[string]any{"file_path": name}, "     1\t" + strings.TrimSpace(want)},
					{"Edit", map[string]any{"file_path": name, "old_string": "round", "new_string": "turn"}, "Replaced 1"},
					{"Grep", map[string]any{"pattern": fmt.Sprintf("session %d turn %d$", i, r), "output_mode": "content"}, filepath.Join(d.dir, name)},
					{"Bash", map[string]any{"command": "cat " + name}, fmt.Sprintf("session %d turn %d", i, r)},
				}
				for _, s := range steps {
					res, err := tryCall(cs, s.tool, s.args)
					if err != nil || res.IsError || !strings.Contains(res.Text, s.want) {
						errs <- fmt.Sprintf("session %d %s(%v) = %+v, %v; want %q in it", i, s.tool, s.args, res, err, s.want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	entries, _ := filepath.Glob(filepath.Join(d.dir, "s*", "*.txt"))
	if len(entries) != sessions*rounds {
		t.Errorf("%d files, want %d", len(entries), sessions*rounds)
	}
	for _, e := range entries {
		if b, _ := os.ReadFile(e); !strings.Contains(string(b), "turn") {
			t.Errorf("%s holds %q", e, b)
		}
	}
}
