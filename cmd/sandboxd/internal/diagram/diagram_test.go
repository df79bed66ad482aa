package diagram

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/ci"
)

// self is the test binary, which renders D2 as sandboxd-diagram does
// (see TestMain).
func self(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// dotPath is Graphviz's dot; the test skips without it unless CI is
// set, where make test-deps has installed it.
func dotPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("dot")
	if err == nil {
		return p
	}
	ci.Skip(t, "dot is not installed (apt-get install graphviz, or make test-deps)")
	return ""
}

// renderLimit is the time limit of a test's render that would run far
// longer than it: d, or under -short 300 ms, which stops it as surely
// (such a render keeps a core busy until it is stopped).
func renderLimit(d time.Duration) time.Duration {
	if testing.Short() {
		return 300 * time.Millisecond
	}
	return d
}

func newRenderer(t *testing.T) *Renderer {
	return New(dotPath(t), self(t), DefaultLimits)
}

// fixedDOT is a graph whose drawing has a known size: one fixed-size box
// filling a graph with no margin, at 72 dpi (1 inch = 72 px).
const fixedDOT = `digraph { graph [pad=0, margin=0, dpi=72]; node [shape=box, fixedsize=true, width=2, height=1, label="hello"]; a }`

func TestDOTToPNGHasTheGraphsSize(t *testing.T) {
	img, err := newRenderer(t).Render(context.Background(), DOT, PNG, fixedDOT)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatal(err)
	}
	// 2 × 1 inches at 72 dpi.
	if cfg.Width != 144 || cfg.Height != 72 {
		t.Errorf("png is %d×%d, want 144×72", cfg.Width, cfg.Height)
	}
}

type svgRoot struct {
	Width   string `xml:"width,attr"`
	Height  string `xml:"height,attr"`
	ViewBox string `xml:"viewBox,attr"`
}

func parseSVG(t *testing.T, data []byte) svgRoot {
	t.Helper()
	var root svgRoot
	if err := xml.Unmarshal(data, &root); err != nil {
		t.Fatalf("svg: %v\n%s", err, data)
	}
	return root
}

func TestDOTToSVGHasTheGraphsSize(t *testing.T) {
	img, err := newRenderer(t).Render(context.Background(), DOT, SVG, fixedDOT)
	if err != nil {
		t.Fatal(err)
	}
	root := parseSVG(t, img.Data)
	if root.Width != "144pt" || root.Height != "72pt" || root.ViewBox != "0.00 0.00 144.00 72.00" {
		t.Errorf("svg root: %+v", root)
	}
	if img.Format.MIME() != "image/svg+xml" {
		t.Errorf("MIME %q", img.Format.MIME())
	}
}

// hostFile is a real PNG (so dot would take it, if it could open it)
// holding marker, in a directory of its own.
func hostFile(t *testing.T, marker string) string {
	t.Helper()
	src, err := New(dotPath(t), self(t), DefaultLimits).Render(context.Background(), DOT, PNG,
		`digraph { graph [pad=0, dpi=72, comment="`+marker+`"]; node [shape=box, fixedsize=true, width=3, height=2, label="`+marker+`"]; a }`)
	if err != nil {
		t.Fatal(err)
	}
	data := append(src.Data, marker...)
	p := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDOTReadsNoHostFile renders graphs naming a host file every way
// Graphviz loads one, and the same graphs naming a file that does not
// exist: the outputs must be the same bytes, with no trace of the file.
func TestDOTReadsNoHostFile(t *testing.T) {
	const marker = "HOSTMARKER-5b1e77"
	secret := hostFile(t, marker)
	missing := filepath.Join(filepath.Dir(secret), "missing.png")
	graphs := map[string]string{
		"image":      `digraph { a [image="FILE", label=""] }`,
		"imagepath":  `digraph { imagepath="DIR"; a [image="BASE", label=""] }`,
		"shapefile":  `digraph { a [shape=custom, shapefile="FILE"] }`,
		"epsf":       `digraph { a [shape=epsf, shapefile="FILE"] }`,
		"html img":   `digraph { a [shape=plain, label=<<TABLE><TR><TD><IMG SRC="FILE"/></TD></TR></TABLE>>] }`,
		"fontname":   `digraph { fontpath="DIR"; a [fontname="FILE", label="x"] }`,
		"stylesheet": `digraph { stylesheet="FILE"; a }`,
	}
	r := newRenderer(t)
	render := func(format Format, graph, file string) (string, error) {
		g := strings.NewReplacer("FILE", file, "DIR", filepath.Dir(file), "BASE", filepath.Base(file)).Replace(graph)
		img, err := r.Render(context.Background(), DOT, format, g)
		if err != nil {
			return "", err
		}
		// The name itself may be echoed (an SVG keeps a stylesheet's
		// href): what matters is what was read.
		return strings.ReplaceAll(string(img.Data)+img.Warnings, file, "FILE"), nil
	}
	for name, graph := range graphs {
		for _, format := range []Format{SVG, PNG} {
			got, gotErr := render(format, graph, secret)
			want, wantErr := render(format, strings.ReplaceAll(graph, "secret.png", "missing.png"), missing)
			got = strings.ReplaceAll(got, filepath.Base(secret), "BASE")
			want = strings.ReplaceAll(want, filepath.Base(missing), "BASE")
			if (gotErr == nil) != (wantErr == nil) {
				t.Errorf("%s %s: error %v with the host file, %v without", name, format, gotErr, wantErr)
				continue
			}
			if gotErr != nil {
				got = strings.ReplaceAll(strings.ReplaceAll(gotErr.Error(), secret, "FILE"), filepath.Base(secret), "BASE")
				want = strings.ReplaceAll(strings.ReplaceAll(wantErr.Error(), missing, "FILE"), filepath.Base(missing), "BASE")
			}
			if strings.Contains(got, marker) {
				t.Errorf("%s %s: the host file's marker is in the output", name, format)
			}
			if got != want {
				t.Errorf("%s %s: output differs with the host file present:\n%.600s\n---\n%.600s", name, format, got, want)
			}
		}
	}
}

func TestDOTRunsNowhereNearTheWorkspace(t *testing.T) {
	// A relative name resolves in dot's own empty directory: a file
	// beside the daemon's current directory is as unreachable.
	img, err := newRenderer(t).Render(context.Background(), DOT, SVG, `digraph { a [image="go.mod"] }`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(img.Warnings, "file loading is disabled") {
		t.Errorf("warnings do not say file loading is disabled: %q", img.Warnings)
	}
}

func TestDOTSyntaxErrorIsReported(t *testing.T) {
	_, err := newRenderer(t).Render(context.Background(), DOT, SVG, `digraph { a -> }`)
	if err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Fatalf("err = %v, want dot's syntax error", err)
	}
}

// hugeDOT is a dense graph that takes dot far longer than a second.
func hugeDOT(nodes int) string {
	var b strings.Builder
	b.WriteString("digraph {\n")
	for i := range nodes {
		for j := 1; j <= 6; j++ {
			b.WriteString("n")
			b.WriteString(strconv.Itoa(i))
			b.WriteString(" -> n")
			b.WriteString(strconv.Itoa((i*7 + j*31) % nodes))
			b.WriteString(";\n")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func TestDOTTimeLimitKillsIt(t *testing.T) {
	lim := DefaultLimits
	lim.Timeout = renderLimit(time.Second)
	r := New(dotPath(t), self(t), lim)
	start := time.Now()
	_, err := r.Render(context.Background(), DOT, SVG, hugeDOT(1500))
	var le *LimitError
	if !errors.As(err, &le) || le.What != "render time" {
		t.Fatalf("err = %v, want the time limit", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v to stop", took)
	}
}

func TestDOTHugeBitmapIsRefused(t *testing.T) {
	// Time enough to draw the square below on a loaded machine: the
	// limits tested here are others.
	lim := DefaultLimits
	lim.Timeout = 2 * time.Minute
	r := New(dotPath(t), self(t), lim)
	cases := []struct{ dpi, width, height, what string }{
		// 100 × 100 inches at 300 dpi: a 30000-pixel square, 3.6 GB to
		// draw on, past dot's memory limit.
		{"300", "100", "100", "memory"},
		// At 100 dpi, 10000 pixels on one side: drawn, but too big to
		// return, whichever side it is.
		{"100", "100", "1", "width/height (10000×100 px)"},
		{"100", "1", "100", "width/height (100×10000 px)"},
	}
	if !testing.Short() {
		// Both sides: 400 MB of pixels, seconds of dot's time.
		cases = append(cases, struct{ dpi, width, height, what string }{"100", "100", "100", "width/height (10000×10000 px)"})
	}
	for _, c := range cases {
		_, err := r.Render(context.Background(), DOT, PNG,
			`digraph { graph [pad=0, dpi=`+c.dpi+`]; a [shape=box, fixedsize=true, width=`+c.width+`, height=`+c.height+`] }`)
		var le *LimitError
		if !errors.As(err, &le) || le.What != c.what {
			t.Errorf("dpi %s, %s × %s inches: err = %v, want the %s limit", c.dpi, c.width, c.height, err, c.what)
		}
	}
}

func TestOutputCap(t *testing.T) {
	lim := DefaultLimits
	lim.Output = 1000
	r := New(dotPath(t), self(t), lim)
	_, err := r.Render(context.Background(), DOT, SVG, `digraph { a -> b -> c -> d -> e }`)
	var le *LimitError
	if !errors.As(err, &le) || le.What != "image" {
		t.Fatalf("err = %v, want the image limit", err)
	}
	_, err = r.Render(context.Background(), D2, SVG, `a -> b`)
	if !errors.As(err, &le) || le.What != "image" {
		t.Fatalf("d2: err = %v, want the image limit", err)
	}
}

func TestSourceCap(t *testing.T) {
	lim := DefaultLimits
	lim.Source = len("a -> b")
	r := New("", self(t), lim)
	if _, err := r.Render(context.Background(), D2, SVG, `a -> b`); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err := r.Render(context.Background(), D2, SVG, `a -> bc`)
	var le *LimitError
	if !errors.As(err, &le) || err.Error() != "diagram source over the limit of 6 bytes" {
		t.Fatalf("err = %v, want the source limit", err)
	}
}

func TestRefusals(t *testing.T) {
	r := New("", self(t), DefaultLimits)
	for _, c := range []struct {
		lang   Language
		format Format
		want   string
	}{
		{Mermaid, SVG, "no Mermaid renderer"},
		{D2, PNG, "headless browser"},
		{"plantuml", SVG, `language "plantuml"`},
		{DOT, "pdf", `format "pdf"`},
		{DOT, SVG, "Graphviz is not installed"},
	} {
		_, err := r.Render(context.Background(), c.lang, c.format, "a")
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: err = %v, want ErrUnsupported saying %q", c.lang, c.format, err, c.want)
		}
	}
}
