package diagram

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestD2ToSVG(t *testing.T) {
	img, err := New("", self(t), DefaultLimits).Render(context.Background(), D2, SVG, "a -> b: hello")
	if err != nil {
		t.Fatal(err)
	}
	root := parseSVG(t, img.Data)
	if root.ViewBox == "" || !strings.Contains(string(img.Data), "hello") {
		t.Errorf("svg root %+v, or no label", root)
	}
}

func TestD2ImportsAreRefused(t *testing.T) {
	const marker = "HOSTMARKER-d2-91c4"
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.d2")
	if err := os.WriteFile(secret, []byte(marker+" -> x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	r := New("", self(t), DefaultLimits)
	for _, src := range []string{
		"x: @secret",
		"x: @" + strings.TrimSuffix(secret, ".d2"),
		"...@secret",
		"...@" + strings.TrimSuffix(secret, ".d2"),
		"x: @../" + filepath.Base(dir) + "/secret",
	} {
		img, err := r.Render(context.Background(), D2, SVG, src)
		if err == nil {
			t.Errorf("%q rendered: %.300s", src, img.Data)
			continue
		}
		if strings.Contains(err.Error(), marker) || !strings.Contains(err.Error(), ErrImport.Error()) {
			t.Errorf("%q: err = %v, want the import refused", src, err)
		}
	}
}

func TestD2IconsAreNotFetched(t *testing.T) {
	const marker = "HOSTMARKER-icon-0d2f"
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(marker))
	}))
	defer srv.Close()
	secret := filepath.Join(t.TempDir(), "secret.svg")
	if err := os.WriteFile(secret, []byte(marker), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "a: {icon: " + srv.URL + "/icon.svg}\n" +
		"b: {shape: image; icon: " + srv.URL + "/image.png}\n" +
		"c: {icon: " + secret + "}\n" +
		"d: {shape: image; icon: file://" + secret + "}\n" +
		"a -> b -> c -> d\n"
	img, err := New("", self(t), DefaultLimits).Render(context.Background(), D2, SVG, src)
	if err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 0 {
		t.Errorf("the icon server was asked %d times", hits.Load())
	}
	if strings.Contains(string(img.Data), marker) {
		t.Error("the host file's marker is in the svg")
	}
}

func TestD2ShapeCap(t *testing.T) {
	lim := DefaultLimits
	lim.Shapes = 5
	_, err := New("", self(t), lim).Render(context.Background(), D2, SVG, "a -> b -> c -> d")
	// Counted in the child, after the compile: its text comes back.
	if want := "d2: diagram shapes and connections (7) over the limit of 5"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// hugeD2 is a chain of n shapes, each linked to a few before it.
func hugeD2(n int) string {
	var b strings.Builder
	for i := 1; i < n; i++ {
		for _, back := range []int{1, 7, 31} {
			if i >= back {
				b.WriteString("n" + strconv.Itoa(i-back) + " -> n" + strconv.Itoa(i) + "\n")
			}
		}
	}
	return b.String()
}

func TestD2TimeLimitKillsIt(t *testing.T) {
	lim := DefaultLimits
	lim.Timeout = renderLimit(time.Second)
	r := New("", self(t), lim)
	start := time.Now()
	// Fifty shapes densely linked: over a minute of layout.
	_, err := r.Render(context.Background(), D2, SVG, hugeD2(50))
	var le *LimitError
	if !errors.As(err, &le) || le.What != "render time" {
		t.Fatalf("err = %v, want the time limit", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v to stop", took)
	}
}

func TestD2ErrorsComeBack(t *testing.T) {
	_, err := New("", self(t), DefaultLimits).Render(context.Background(), D2, SVG, "a -> b: {shape: nonsense}")
	if err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Fatalf("err = %v, want d2's complaint", err)
	}
	_, err = New("", self(t), DefaultLimits).Render(context.Background(), D2, SVG, "vars: {d2-config: {layout-engine: elk}}\na -> b")
	if err == nil || !strings.Contains(err.Error(), "dagre only") {
		t.Fatalf("err = %v, want the layout engine refused", err)
	}
}

// TestD2WithoutTheHelper: a sandboxd without sandboxd-diagram next to it
// says so.
func TestD2WithoutTheHelper(t *testing.T) {
	if got := HelperNextTo("/nonexistent/sandboxd"); got != "" {
		t.Errorf("HelperNextTo found %q", got)
	}
	_, err := New("", HelperNextTo("/nonexistent/sandboxd"), DefaultLimits).Render(context.Background(), D2, SVG, "a -> b")
	if want := "d2: unsupported: sandboxd-diagram is not installed next to sandboxd"; err == nil || err.Error() != want || !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// TestD2ThroughAHeldHelper: the name HoldHelper gives renders, and is
// the descriptor's, not the path's.
func TestD2ThroughAHeldHelper(t *testing.T) {
	if got := HoldHelper(""); got != "" {
		t.Errorf("HoldHelper(\"\") = %q", got)
	}
	held := HoldHelper(self(t))
	if !strings.HasPrefix(held, "/proc/self/fd/") {
		t.Fatalf("HoldHelper = %q", held)
	}
	img, err := New("", held, DefaultLimits).Render(context.Background(), D2, SVG, "a -> b: held")
	if err != nil || !strings.Contains(string(img.Data), "held") {
		t.Fatalf("err %v", err)
	}
}
