package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram"
)

// picture is a render_diagram result: its text and its image.
type picture struct {
	text    string
	image   []byte
	mime    string
	isError bool
}

func render(t *testing.T, cs *mcp.ClientSession, args map[string]any) picture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "render_diagram", Arguments: args})
	if err != nil {
		t.Fatalf("render_diagram(%v): %v", args, err)
	}
	p := picture{isError: res.IsError}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			p.text += c.Text
		case *mcp.ImageContent:
			if p.image != nil {
				t.Fatal("two images")
			}
			p.image, p.mime = c.Data, c.MIMEType
		}
	}
	return p
}

func rendered(t *testing.T, cs *mcp.ClientSession, args map[string]any) picture {
	t.Helper()
	p := render(t, cs, args)
	if p.isError || p.image == nil {
		t.Fatalf("render_diagram(%v): error %v, image %d bytes: %s", args, p.isError, len(p.image), p.text)
	}
	return p
}

func refused(t *testing.T, cs *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	p := render(t, cs, args)
	if !p.isError || p.image != nil {
		t.Fatalf("render_diagram(%v) succeeded, want an error: %s", args, p.text)
	}
	return p.text
}

// needDot skips without Graphviz's dot, unless CI is set.
func needDot(t *testing.T) {
	t.Helper()
	needTool(t, []string{"PATH=" + os.Getenv("PATH")}, "dot", "graphviz")
}

// boxDOT is one fixed-size box, 2 × 1 inches, at 72 dpi, with no margin.
const boxDOT = `digraph { graph [pad=0, margin=0, dpi=72]; node [shape=box, fixedsize=true, width=2, height=1, label="hello"]; a }`

type svgRoot struct {
	Width   string `xml:"width,attr"`
	Height  string `xml:"height,attr"`
	ViewBox string `xml:"viewBox,attr"`
}

func svgOf(t *testing.T, data []byte) svgRoot {
	t.Helper()
	var root svgRoot
	if err := xml.Unmarshal(data, &root); err != nil {
		t.Fatalf("svg: %v\n%.500s", err, data)
	}
	return root
}

func TestRenderDiagramDOTToPNG(t *testing.T) {
	needDot(t)
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	p := rendered(t, cs, map[string]any{"language": "dot", "format": "png", "source": boxDOT, "output_path": "docs/box.png"})
	if p.mime != "image/png" {
		t.Errorf("mime %q", p.mime)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(p.image))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 144 || cfg.Height != 72 {
		t.Errorf("png is %d×%d, want 144×72", cfg.Width, cfg.Height)
	}
	written, err := os.ReadFile(filepath.Join(d.dir, "docs", "box.png"))
	if err != nil || !bytes.Equal(written, p.image) {
		t.Errorf("output_path holds %d bytes (%v), not the %d returned", len(written), err, len(p.image))
	}
	// Written in this session, it can be rendered over.
	rendered(t, cs, map[string]any{"language": "dot", "format": "png", "source": boxDOT, "output_path": "docs/box.png"})
}

func TestRenderDiagramDOTToSVG(t *testing.T) {
	needDot(t)
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	p := rendered(t, cs, map[string]any{"language": "dot", "source": boxDOT, "output_path": "box.svg"})
	if p.mime != "image/svg+xml" {
		t.Errorf("mime %q", p.mime)
	}
	root := svgOf(t, p.image)
	if root.Width != "144pt" || root.Height != "72pt" || root.ViewBox != "0.00 0.00 144.00 72.00" {
		t.Errorf("svg root %+v", root)
	}
	written, _ := os.ReadFile(filepath.Join(d.dir, "box.svg"))
	if !bytes.Equal(written, p.image) {
		t.Error("output_path does not hold the image returned")
	}
}

func TestRenderDiagramD2ToSVG(t *testing.T) {
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	p := rendered(t, cs, map[string]any{"language": "d2", "format": "svg", "source": "client -> server: request", "output_path": "flow.svg"})
	root := svgOf(t, p.image)
	if root.ViewBox == "" || !strings.Contains(string(p.image), "request") {
		t.Errorf("svg root %+v, or its label missing", root)
	}
	written, _ := os.ReadFile(filepath.Join(d.dir, "flow.svg"))
	if !bytes.Equal(written, p.image) {
		t.Error("output_path does not hold the image returned")
	}
}

func TestRenderDiagramRefusals(t *testing.T) {
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"language": "mermaid", "source": "graph TD; A-->B"}, "no Mermaid renderer is installed here"},
		{map[string]any{"language": "d2", "format": "png", "source": "a"}, "ask for svg"},
		{map[string]any{"language": "d2", "source": "x: @secret"}, diagram.ErrImport.Error()},
		{map[string]any{"language": "d2", "source": "a", "output_path": "../out.svg"}, "outside"},
	} {
		if got := refused(t, cs, c.args); !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want it to say %q", c.args, got, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(d.dir), "out.svg")); err == nil {
		t.Error("out.svg was written outside the workspace")
	}
}

// TestRenderDiagramWritesIntoTheWorkspace: without output_path the image
// goes to .sandboxd/diagrams, named for its content, which git is told
// to ignore, and the text says where and how big it is, so a client that
// keeps only text can use it; the same image again is the same file.
func TestRenderDiagramWritesIntoTheWorkspace(t *testing.T) {
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	p := rendered(t, cs, map[string]any{"language": "d2", "source": "client -> server"})
	sum := sha256.Sum256(p.image)
	file := filepath.Join(d.dir, ".sandboxd", "diagrams", "diagram-"+hex.EncodeToString(sum[:8])+".svg")
	size := strconv.Itoa(len(p.image))
	if want := "Rendered d2 to svg (" + size + " bytes).\nWrote the image (" + size + " bytes) to " + file + "."; p.text != want {
		t.Errorf("text %q, want %q", p.text, want)
	}
	if written, err := os.ReadFile(file); err != nil || !bytes.Equal(written, p.image) {
		t.Errorf("the file holds %d bytes (%v), not the image returned", len(written), err)
	}
	if ignore, err := os.ReadFile(filepath.Join(d.dir, ".sandboxd", ".gitignore")); err != nil || !strings.HasSuffix(string(ignore), "\n*\n") {
		t.Errorf(".sandboxd/.gitignore: %q, %v", ignore, err)
	}
	again := rendered(t, cs, map[string]any{"language": "d2", "source": "client -> server"})
	if want := "Rendered d2 to svg (" + size + " bytes).\nThe image (" + size + " bytes) is in the workspace at " + file + "."; again.text != want {
		t.Errorf("again: %q, want %q", again.text, want)
	}
	// Another session, which never wrote or read it, finds it too.
	other := d.connect(t, sse)
	if got := rendered(t, other, map[string]any{"language": "d2", "source": "client -> server"}); got.text != again.text {
		t.Errorf("another session: %q", got.text)
	}
}

// TestRenderDiagramFileStaysInTheWorkspace: a .sandboxd that leads out
// of the workspace is refused as any path out is; the image still comes
// back, and the text says it was not written.
func TestRenderDiagramFileStaysInTheWorkspace(t *testing.T) {
	d := startDaemon(t, Config{})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(d.dir, ".sandboxd")); err != nil {
		t.Fatal(err)
	}
	cs := d.connect(t, streamable)
	p := rendered(t, cs, map[string]any{"language": "d2", "source": "a"})
	if !strings.Contains(p.text, "\nThe image was not written to the workspace (") || !strings.Contains(p.text, "outside") {
		t.Errorf("text %q", p.text)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the workspace: %v", entries)
	}
}

func TestRenderDiagramReadOnlyWritesNothing(t *testing.T) {
	d := startDaemon(t, Config{ReadOnly: true})
	cs := d.connect(t, streamable)
	if p := rendered(t, cs, map[string]any{"language": "d2", "source": "a"}); !strings.HasSuffix(p.text, "\nThe image is not written to the workspace: this server is read-only.") {
		t.Errorf("text %q", p.text)
	}
	if _, err := os.Stat(filepath.Join(d.dir, ".sandboxd")); err == nil {
		t.Error(".sandboxd was made")
	}
	if got := refused(t, cs, map[string]any{"language": "d2", "source": "a", "output_path": "a.svg"}); !strings.Contains(got, "read-only") {
		t.Errorf("%q, want the output refused as read-only", got)
	}
	if _, err := os.Stat(filepath.Join(d.dir, "a.svg")); err == nil {
		t.Error("a.svg was written")
	}
}

// lowerDiagramLimits sets the limits of the servers the test starts.
// runawayLimit is the time limit of a render or an edit a test makes run
// away: d, or under -short 300 ms, which stops it as surely (it keeps a
// core busy until it is stopped).
func runawayLimit(d time.Duration) time.Duration {
	if testing.Short() {
		return 300 * time.Millisecond
	}
	return d
}

func lowerDiagramLimits(t *testing.T, set func(*diagram.Limits)) {
	saved := diagramLimits
	set(&diagramLimits)
	t.Cleanup(func() { diagramLimits = saved })
}

func TestRenderDiagramOversizeIsRefusedBeforeWriting(t *testing.T) {
	needDot(t)
	lowerDiagramLimits(t, func(l *diagram.Limits) { l.Output = 1000; l.Source = 200 })
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	for _, args := range []map[string]any{
		{"language": "dot", "source": "digraph { a -> b -> c -> d -> e }", "output_path": "big.svg"},
		{"language": "dot", "format": "png", "source": "digraph { a -> b -> c -> d -> e }", "output_path": "big.svg"},
		{"language": "d2", "source": "a -> b", "output_path": "big.svg"},
		{"language": "d2", "source": strings.Repeat("a -> b\n", 40), "output_path": "big.svg"},
	} {
		got := refused(t, cs, args)
		if !strings.Contains(got, "over the limit of") {
			t.Errorf("%v: %q, want a limit", args, got)
		}
		if _, err := os.Stat(filepath.Join(d.dir, "big.svg")); err == nil {
			t.Fatalf("%v: big.svg was written", args)
		}
	}
}

// hostSecret is a PNG of 216 × 144 pixels outside the workspace, with
// marker in it.
func hostSecret(t *testing.T, cs *mcp.ClientSession, marker string) string {
	t.Helper()
	p := rendered(t, cs, map[string]any{"language": "dot", "format": "png",
		"source": `digraph { graph [pad=0, margin=0, dpi=72]; node [shape=box, fixedsize=true, width=3, height=2, label="x"]; a }`})
	path := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(path, append(p.image, marker...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRenderDiagramReadsNoHostFile(t *testing.T) {
	needDot(t)
	const marker = "HOSTMARKER-mcp-3e9d"
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	secret := hostSecret(t, cs, marker)
	for _, args := range []map[string]any{
		{"language": "dot", "source": `digraph { graph [pad=0, margin=0]; a [image="` + secret + `", label="", shape=plain] }`},
		{"language": "dot", "format": "png", "source": `digraph { graph [pad=0, margin=0, dpi=72]; a [image="` + secret + `", label="", shape=plain] }`},
		{"language": "dot", "source": `digraph { graph [pad=0, margin=0]; a [shape=plain, label=<<TABLE BORDER="0" CELLPADDING="0"><TR><TD><IMG SRC="` + secret + `"/></TD></TR></TABLE>>] }`},
		{"language": "dot", "source": `digraph { imagepath="` + filepath.Dir(secret) + `"; a [image="secret.png", label=""] }`},
		{"language": "dot", "source": `digraph { a [shape=epsf, shapefile="` + secret + `"] }`},
		{"language": "d2", "source": "x: @" + strings.TrimSuffix(secret, ".png")},
		{"language": "d2", "source": "a: {shape: image; icon: " + secret + "}"},
	} {
		p := render(t, cs, args)
		if strings.Contains(p.text, marker) || bytes.Contains(p.image, []byte(marker)) {
			t.Errorf("%v: the host file's marker came back", args)
		}
		if p.image == nil {
			continue
		}
		// Had the image been read, the drawing would take its size.
		if p.mime == "image/png" {
			cfg, err := png.DecodeConfig(bytes.NewReader(p.image))
			if err != nil || cfg.Width >= 216 || cfg.Height >= 144 {
				t.Errorf("%v: a %d×%d png (%v): the host image was drawn", args, cfg.Width, cfg.Height, err)
			}
			continue
		}
		if strings.Contains(string(p.image), "<image") && args["language"] == "dot" {
			t.Errorf("%v: the svg has an <image>", args)
		}
		if args["language"] == "dot" && !strings.Contains(p.text, "file loading is disabled") {
			t.Errorf("%v: no warning that files are not loaded: %s", args, p.text)
		}
	}
}

// denseDOT is a graph dot takes far longer than a second over.
func denseDOT(nodes int) string {
	var b strings.Builder
	b.WriteString("digraph {\n")
	for i := range nodes {
		for j := 1; j <= 6; j++ {
			b.WriteString("n" + strconv.Itoa(i) + " -> n" + strconv.Itoa((i*7+j*31)%nodes) + ";\n")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// denseD2 is fifty shapes, densely linked: a minute of D2's layout.
func denseD2() string {
	var b strings.Builder
	for i := 1; i < 50; i++ {
		for _, back := range []int{1, 7, 31} {
			if i >= back {
				b.WriteString("n" + strconv.Itoa(i-back) + " -> n" + strconv.Itoa(i) + "\n")
			}
		}
	}
	return b.String()
}

func TestRenderDiagramTimeLimit(t *testing.T) {
	needDot(t)
	limit := runawayLimit(time.Second)
	lowerDiagramLimits(t, func(l *diagram.Limits) { l.Timeout = limit })
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	for _, args := range []map[string]any{
		{"language": "dot", "source": denseDOT(1500)},
		{"language": "d2", "source": denseD2()},
	} {
		start := time.Now()
		got := refused(t, cs, args)
		if !strings.Contains(got, "render time over the limit of "+limit.String()) {
			t.Errorf("%s: %q, want the time limit", args["language"], got)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: took %v", args["language"], took)
		}
	}
}

func TestRenderDiagramScrubsTheImage(t *testing.T) {
	d := startDaemon(t, Config{Secrets: map[string]string{"MY_SECRET": registered}})
	cs := d.connect(t, streamable)
	source := `a: "` + registered + `"`
	p := rendered(t, cs, map[string]any{"language": "d2", "source": source})
	if bytes.Contains(p.image, []byte(registered)) {
		t.Error("the secret is in the svg")
	}
	if !bytes.Contains(p.image, []byte("[REDACTED:secret:MY_SECRET]")) {
		t.Error("no redaction in the svg")
	}
	// Written, the marker would stand where a secret was: Write's rule
	// refuses that, here as there.
	got := refused(t, cs, map[string]any{"language": "d2", "source": source, "output_path": "s.svg"})
	if !strings.Contains(got, "redaction marker") {
		t.Errorf("%q, want the marker refused", got)
	}
	if _, err := os.Stat(filepath.Join(d.dir, "s.svg")); err == nil {
		t.Error("s.svg was written")
	}
}

// nestedD2 is shapes nested n deep.
func nestedD2(n int) string {
	return strings.Repeat("a:{", n-1) + "b" + strings.Repeat("}", n-1)
}

// TestRenderDiagramDeepSourceIsRefusedFast: 40000 nested levels of D2,
// which took sandboxd 11 minutes of CPU to compile, are refused before
// any compile, as is DOT past the limit; at the limit DOT renders.
func TestRenderDiagramDeepSourceIsRefusedFast(t *testing.T) {
	needDot(t)
	t.Parallel()
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	for _, args := range []map[string]any{
		{"language": "d2", "source": nestedD2(40000)},
		{"language": "d2", "source": nestedD2(21)},
		{"language": "dot", "source": "digraph {" + strings.Repeat("subgraph {", 20) + "a" + strings.Repeat("}", 21)},
	} {
		start := time.Now()
		got := refused(t, cs, args)
		levels := strings.Count(args["source"].(string), "{") + 1
		if args["language"] == "dot" {
			levels--
		}
		if want := "diagram nesting (" + strconv.Itoa(levels) + " levels) over the limit of 20 levels"; got != want {
			t.Errorf("%s: %q, want %q", args["language"], got, want)
		}
		// Loose (a loaded CI machine): the old code compiled for 32 s
		// and more; the package's tests prove no child starts.
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s: refused in %v", args["language"], took)
		}
	}
	rendered(t, cs, map[string]any{"language": "dot", "source": "digraph {" + strings.Repeat("subgraph {", 19) + "a" + strings.Repeat("}", 20)})
}

// waitNoRenderer waits a little for the D2 children to be gone.
func waitNoRenderer(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(child.Running("d2")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("D2 children left running: %v", child.Running("d2"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitRenderer waits for a D2 child to be running.
func waitRenderer(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(child.Running("d2")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no D2 child started")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRenderDiagramDeepD2StopsWithItsCall: with the nesting check
// lifted, a D2 source whose compile takes half a minute (2000 levels)
// is compiled in a child, which dies at the time limit, when the client
// cancels the call, and when the daemon shuts down.
func TestRenderDiagramDeepD2StopsWithItsCall(t *testing.T) {
	limit := runawayLimit(2 * time.Second)
	lowerDiagramLimits(t, func(l *diagram.Limits) { l.Nesting = 1 << 30; l.Timeout = limit })
	deep := map[string]any{"language": "d2", "source": nestedD2(2000)}
	d := startDaemon(t, Config{})
	cs := d.connect(t, streamable)
	start := time.Now()
	if got, want := refused(t, cs, deep), "d2: diagram render time over the limit of "+limit.String(); got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("stopped after %v", took)
	}
	waitNoRenderer(t)

	lowerDiagramLimits(t, func(l *diagram.Limits) { l.Timeout = time.Minute })
	d = startDaemon(t, Config{ShutdownGrace: 100 * time.Millisecond})
	cs = d.connect(t, streamable)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "render_diagram", Arguments: deep})
		done <- err
	}()
	waitRenderer(t)
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call succeeded")
	}
	waitNoRenderer(t)

	// Shutdown cancels what outlives its grace, and the child dies.
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "render_diagram", Arguments: deep})
		done <- err
	}()
	waitRenderer(t)
	start = time.Now()
	d.http.Shutdown(context.Background())
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("shutdown took %v", took)
	}
	waitNoRenderer(t)
	<-done
}
