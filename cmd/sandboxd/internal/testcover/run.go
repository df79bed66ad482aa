package testcover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/reportdir"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// testName is what -test.list lists that runs as a test: tests, fuzz
// tests (their seeds) and examples, not benchmarks. Compiled on first
// use: its Unicode classes cost every sandboxd start 0.5 ms (issue 34).
var testName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(Test|Fuzz|Example)[\pL\pN_]*$`) })

// outputLimit bounds what one process's output is kept of: the test
// list, or the tail of a failure.
const outputLimit = 1 << 20

// maxProfile bounds the cover profile of one test run that is read.
const maxProfile = 64 << 20

// compute builds dir's test binary with coverage and runs each test
// alone. complete is false when the time ran out before every test ran.
func (c *Cover) compute(ctx context.Context, dir string, timeout time.Duration) (_ *Package, complete bool, _ error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The binary and the profiles are kept outside the workspace, so
	// they never show up in it. The profiles are files sandboxd reads
	// back, made where the tests (the agent's code) can write them but
	// not swap them for a link to what the agent may not read.
	tmp, err := reportdir.New("sandboxd-cover-", c.opts.Credential)
	if err != nil {
		return nil, false, fmt.Errorf("coverage directory: %w", err)
	}
	defer tmp.Remove()
	build, err := tmp.Subdir("build")
	if err != nil {
		return nil, false, fmt.Errorf("coverage directory: %w", err)
	}
	abs := filepath.Join(c.ws.Dir(), dir)
	bin := filepath.Join(build, "pkg.test")

	// -covermode=set: whether a block ran is all that is asked.
	if _, err := c.run(ctx, abs, "go", "test", "-c", "-cover", "-covermode=set", "-o", bin, "."); err != nil {
		return nil, false, fmt.Errorf("build the tests of %s: %w", dir, err)
	}
	pkg := &Package{Dir: dir, Ran: map[string]map[string][]Block{}}
	if _, err := os.Lstat(bin); errors.Is(err, os.ErrNotExist) {
		pkg.Took = time.Since(start)
		return pkg, true, nil // no test files: go test -c writes nothing
	}
	list, err := c.run(ctx, abs, bin, "-test.list=.")
	if err != nil {
		return nil, false, fmt.Errorf("list the tests of %s: %w", dir, err)
	}
	for _, name := range strings.Fields(list) {
		// What an init printed is no test name.
		if !testName().MatchString(name) {
			continue
		}
		if len(pkg.Tests) == c.opts.MaxTests {
			pkg.Skipped++
			continue
		}
		pkg.Tests = append(pkg.Tests, name)
	}

	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
		sem  = make(chan struct{}, c.opts.Parallel)
	)
	for i, name := range pkg.Tests {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ran, failed, err := c.runTest(ctx, abs, bin, tmp, strconv.Itoa(i)+".cover", name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				return
			}
			pkg.Ran[name] = ran
			if failed {
				pkg.Failed = append(pkg.Failed, name)
			}
		}()
	}
	wg.Wait()
	// In test order, not in the order the runs ended.
	slices.SortFunc(pkg.Failed, func(a, b string) int { return slices.Index(pkg.Tests, a) - slices.Index(pkg.Tests, b) })
	pkg.Took = time.Since(start)
	if ctx.Err() != nil {
		return pkg, false, nil
	}
	if err := errors.Join(errs...); err != nil {
		return nil, false, err
	}
	return pkg, true, nil
}

// runTest runs one top-level test (its subtests with it) and reads what
// it ran, from the profile file it writes in tmp. A test that fails
// still ran what it ran.
func (c *Cover) runTest(ctx context.Context, dir, bin string, tmp *reportdir.Dir, profile, name string) (map[string][]Block, bool, error) {
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	path, err := tmp.File(profile)
	if err != nil {
		return nil, false, err
	}
	_, err = c.run(ctx, dir, bin, "-test.run=^"+name+"$", "-test.coverprofile="+path, "-test.timeout="+remaining(ctx).String())
	var xe *sandbox.ExitError
	failed := err != nil
	if err != nil && !errors.As(err, &xe) && ctx.Err() == nil {
		return nil, false, err
	}
	data, rerr := tmp.Read(profile, maxProfile)
	if rerr == nil && data == nil {
		rerr = errors.New("the test wrote none")
	}
	if rerr != nil {
		if err != nil {
			return nil, false, err
		}
		return nil, false, fmt.Errorf("no cover profile: %w", rerr)
	}
	ran, perr := parseProfile(data)
	return ran, failed, perr
}

func remaining(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Second).Round(time.Second)
	}
	return 10 * time.Minute
}

// run runs a command in dir within ctx and returns its stdout; a
// non-zero exit is an error that carries the tail of its output.
func (c *Cover) run(ctx context.Context, dir, command string, args ...string) (string, error) {
	bin := command
	if !filepath.IsAbs(command) {
		var err error
		if bin, err = shell.LookPath(command, c.opts.Env); err != nil {
			return "", err
		}
	}
	p, err := shell.Start(ctx, sandbox.Request{Command: bin, Args: args, Env: shell.MergeEnv(c.opts.Env, []string{"PWD=" + dir}, nil)}, shell.Options{
		Dir:         dir,
		Timeout:     remaining(ctx),
		CleanEnv:    true,
		Credential:  c.opts.Credential,
		Isolated:    true,
		OutputLimit: outputLimit,
	})
	if err != nil {
		return "", fmt.Errorf("start %s: %w", filepath.Base(command), err)
	}
	resp, err := p.Wait()
	if err != nil {
		return string(resp.Stdout), fmt.Errorf("%w%s", err, tail(resp.Stdout, resp.Stderr))
	}
	return string(resp.Stdout), nil
}

// tail is the end of a failed command's output, for its error.
func tail(stdout, stderr []byte) string {
	const keep = 2 << 10
	out := strings.TrimSpace(string(stdout) + "\n" + string(stderr))
	if len(out) > keep {
		out = "..." + strings.ToValidUTF8(out[len(out)-keep:], "")
	}
	if out == "" {
		return ""
	}
	return ":\n" + out
}
