package host

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/config"
	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/plugin/discovery"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// Test plugin builds, made once per test binary in TestMain.
var (
	buildDir   string
	testPlugin string // the plain test plugin
	liarPlugin string // reports version 9.9.9 whatever its file name says
	junkPlugin string // prints to stdout before its handshake
)

// shortSkip is why the tests that run a plugin skip under -short.
const shortSkip = "skipping in -short mode: needs the test plugin binaries built (make test runs it)"

func TestMain(m *testing.M) {
	// The benchmarks' in-process direct calls are contained by starts
	// of this binary.
	supervisor.Init()
	flag.Parse() // for testing.Short; m.Run parses no further
	// Under -short, three static links of the test plugin would be most
	// of this package's time; install skips the tests that need them.
	// The host child of TestHostKilledTakesPluginDown runs the plugin its
	// parent installed: building three more would only delay it past the
	// parent's patience.
	if testing.Short() || os.Getenv("HOST_KILL_CHILD") == "1" {
		os.Exit(m.Run())
	}
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "promptkit-host-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	buildDir = dir
	builds := []struct {
		out     *string
		ldflags string
	}{
		{&testPlugin, ""},
		{&liarPlugin, "-X main.reportVersion=9.9.9"},
		{&junkPlugin, "-X main.junk=hello-from-a-confused-plugin"},
	}
	// The three differ only in their link, which is single-threaded:
	// link them side by side.
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, b := range builds {
		*b.out = filepath.Join(dir, fmt.Sprintf("testplugin-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("go", "build", "-o", *b.out, "-ldflags", b.ldflags, "../internal/testplugin")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("build test plugin (ldflags %q): %v\n%s", b.ldflags, err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// install copies a test plugin build into dir under a plugin file name.
// Under -short, where TestMain builds none, it skips the test.
func install(t testing.TB, build, dir, fileName string) string {
	t.Helper()
	if testing.Short() {
		t.Skip(shortSkip)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(build)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fileName)
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// env is a search-path environment that finds nothing by default, so
// tests see only the plugins they install.
func emptyEnv(t testing.TB) *discovery.Env {
	t.Helper()
	d := t.TempDir()
	return &discovery.Env{Home: d, WorkDir: d, ExeDir: filepath.Join(d, "exe")}
}

// starts records plugin launches: the test plugin drops a file named for
// its pid into TESTPLUGIN_STARTED_DIR.
type starts struct{ dir string }

func trackStarts(t testing.TB) starts {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TESTPLUGIN_STARTED_DIR", dir)
	return starts{dir}
}

func (s starts) pids(t testing.TB) []int {
	t.Helper()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGone fails the test if any of pids is still alive (see proctest.Alive)
// after within.
func waitGone(t testing.TB, within time.Duration, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var left []int
		for _, pid := range pids {
			if proctest.Alive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v still alive after %v", left, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newHost(t testing.TB, opts Options) *Host {
	t.Helper()
	if opts.Env == nil {
		opts.Env = emptyEnv(t)
	}
	if opts.CacheDir == "" {
		// Each test's own: what one test's plugins said must not answer
		// for another's.
		opts.CacheDir = t.TempDir()
	}
	h, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func open(t testing.TB, h *Host, s config.Sandbox) sandbox.Sandbox {
	t.Helper()
	if s.Name == "" {
		s.Name = "sb"
	}
	sb, err := h.Open(s)
	if err != nil {
		t.Fatalf("Open(%+v): %v", s, err)
	}
	return sb
}

// syncBuffer collects log output from several goroutines.
type syncBuffer struct {
	ch  chan struct{}
	buf strings.Builder
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{ch: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.ch <- struct{}{}
	defer func() { <-b.ch }()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.ch <- struct{}{}
	defer func() { <-b.ch }()
	return b.buf.String()
}

func testLogger(w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "host", Output: w, Level: hclog.Info})
}

// goroutinesSettle waits for the goroutine count to come back to at most
// base, tolerating the runtime's own stragglers briefly.
func goroutinesSettle(t testing.TB, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutines: %d, want <= %d\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
