package dockertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestImagesBuildAndAreLabelled(t *testing.T) {
	refPattern := regexp.MustCompile(`^promptkit-test/[a-z]+:[0-9a-f]{12}$`)
	for _, name := range []string{Busybox, Hooks} {
		ref := Image(t, name)
		if !refPattern.MatchString(ref) || !strings.HasPrefix(ref, repository+name+":") {
			t.Errorf("Image(%s) = %q, want promptkit-test/%s:<12 hex digits>", name, ref, name)
		}
		labels := Docker(t, "image", "inspect", "--format", `{{index .Config.Labels "org.promptkit.test"}} {{index .Config.Labels "org.promptkit.test.image"}}`, ref)
		if labels != "1 "+name {
			t.Errorf("%s labels = %q, want org.promptkit.test=1 and org.promptkit.test.image=%s", ref, labels, name)
		}
	}
}

func TestImageIsACacheHit(t *testing.T) {
	first := Image(t, Hooks)
	before := builds.Load()

	// In this process: remembered, no engine round trip.
	start := time.Now()
	if again := Image(t, Hooks); again != first {
		t.Errorf("second Image = %q, want %q", again, first)
	}
	t.Logf("remembered: %v", time.Since(start))

	// As another process would see it: found in the engine by its tag.
	built.forget()
	start = time.Now()
	if again := Image(t, Hooks); again != first {
		t.Errorf("Image after forgetting = %q, want %q", again, first)
	}
	t.Logf("found in the engine: %v", time.Since(start))

	if n := builds.Load() - before; n != 0 {
		t.Errorf("%d rebuilds, want none", n)
	}
}

func TestBuildAllReturnsEveryImage(t *testing.T) {
	Require(t)
	refs, err := BuildAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{Busybox, Hooks} {
		if want := Image(t, name); refs[name] != want {
			t.Errorf("BuildAll()[%s] = %q, want %q", name, refs[name], want)
		}
	}
	if len(refs) != len(Names()) {
		t.Errorf("BuildAll returned %d images, want %d: %v", len(refs), len(Names()), refs)
	}
}

func TestUnknownImage(t *testing.T) {
	_, err := ensure(context.Background(), "nope")
	if err == nil || !strings.Contains(err.Error(), `no test image "nope"`) || !strings.Contains(err.Error(), "busybox, hooks") {
		t.Errorf("ensure(nope) = %v, want an error naming the image and the ones there are", err)
	}
}

// TestRefIsStable: the tag is the cache key, so it must not change from
// one computation to the next, and must differ between images.
func TestRefIsStable(t *testing.T) {
	if _, err := os.Stat(busyboxPath); err != nil && testing.Short() {
		// make unit promises no apt; the full run installs busybox-static.
		t.Skipf("-short and no busybox to hash: %v", err)
	}
	ctx := context.Background()
	seen := map[string]string{}
	for _, name := range Names() {
		r := recipes[name]
		if r.files != nil && testing.Short() {
			// Its files are compiled from this module (sandboxd, the CLI,
			// a plugin): make unit builds no binaries, make test hashes
			// the real ones.
			t.Logf("-short: %s's compiled files stood in for", name)
			r.files = standInFiles(name)
		}
		a, err := r.ref(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.ref(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Errorf("%s: ref changed from %s to %s", name, a, b)
		}
		if other, dup := seen[a]; dup {
			t.Errorf("%s and %s share ref %s", name, other, a)
		}
		seen[a] = name
	}
}

// standInFiles gives a recipe's files without compiling them: a new map
// on every call, of several paths, so a ref that depended on the order a
// map is walked in would show it.
func standInFiles(name string) func(context.Context) (map[string][]byte, error) {
	return func(context.Context) (map[string][]byte, error) {
		files := map[string][]byte{}
		for i := range 8 {
			files[fmt.Sprintf("/usr/local/bin/%s-%d", name, i)] = []byte(fmt.Sprintf("%s binary %d\n", name, i))
		}
		return files, nil
	}
}

func TestOnceCacheRunsOncePerKey(t *testing.T) {
	c := newOnceCache()
	var calls atomic.Int64
	fill := func() (string, error) {
		calls.Add(1)
		time.Sleep(20 * time.Millisecond) // long enough for the others to pile up
		return "ref", nil
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if v, err := c.get("k", fill); v != "ref" || err != nil {
				t.Errorf("get = %q, %v", v, err)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("fill ran %d times, want 1", n)
	}
}

func TestOnceCacheRetriesAfterFailure(t *testing.T) {
	c := newOnceCache()
	boom := errors.New("boom")
	if _, err := c.get("k", func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("first get error = %v, want boom", err)
	}
	v, err := c.get("k", func() (string, error) { return "ref", nil })
	if v != "ref" || err != nil {
		t.Errorf("get after a failure = %q, %v; want a fresh try", v, err)
	}
}

// TestImageBuildsWhatIsMissing builds an image no run has built before (its
// Dockerfile carries a random value), then asks for it again.
func TestImageBuildsWhatIsMissing(t *testing.T) {
	Require(t)
	ctx := context.Background()
	r := recipes[Busybox]
	r.name = "buildtest"
	r.dockerfile += "ENV PROMPTKIT_BUILD_TEST=" + strconv.FormatInt(time.Now().UnixNano(), 36) + "\n"
	t.Cleanup(func() { built.forget() })

	before := builds.Load()
	ref, err := ensureRecipe(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Docker(t, "image", "rm", ref) }) // unique to this run: not worth caching
	if n := builds.Load() - before; n != 1 {
		t.Errorf("first ensure ran %d builds, want 1", n)
	}
	if out := Docker(t, "run", "--rm", "--network", "none", "--label", UniqueLabel(t), ref, "sh", "-c", "echo $PROMPTKIT_BUILD_TEST"); !strings.Contains(r.dockerfile, "="+out+"\n") {
		t.Errorf("the built image says %q, want the value in its Dockerfile", out)
	}

	built.forget()
	again, err := ensureRecipe(ctx, r)
	if err != nil || again != ref {
		t.Errorf("second ensure = %q, %v; want %q", again, err, ref)
	}
	if n := builds.Load() - before; n != 1 {
		t.Errorf("second ensure rebuilt (%d builds in all)", n)
	}
}

// TestRefFollowsContent: a change to what goes into an image changes its tag.
func TestRefFollowsContent(t *testing.T) {
	need(t, busyboxProblem()) // the ref hashes the busybox binary
	ctx := context.Background()
	r := recipes[Busybox]
	a, err := r.ref(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.dockerfile += "ENV X=1\n"
	b, err := r.ref(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Errorf("ref %s did not change with the Dockerfile", a)
	}
}
