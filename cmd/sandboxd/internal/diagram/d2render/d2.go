package d2render

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"oss.terrastruct.com/d2/d2compiler"
	"oss.terrastruct.com/d2/d2graph"
	"oss.terrastruct.com/d2/d2layouts/d2dagrelayout"
	"oss.terrastruct.com/d2/d2lib"
	"oss.terrastruct.com/d2/d2renderers/d2svg"
	d2log "oss.terrastruct.com/d2/lib/log"
	"oss.terrastruct.com/d2/lib/textmeasure"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram"
)

// noFiles is the file system D2 imports are opened from: it holds
// nothing. Without one, d2 opens import paths with os.Open.
type noFiles struct{}

func (noFiles) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: diagram.ErrImport}
}

// Register makes Serve the child function diagram.ChildD2 in this
// executable; child.Serve then runs it.
func Register() { child.Register(diagram.ChildD2, Serve) }

// Serve compiles, checks and renders the diagram.D2Job in input, all of
// it in the child: D2's compiler takes time cubic in the source's
// nesting, and its layout runs in an interpreter no context reaches.
func Serve(input []byte) ([]byte, error) {
	var job diagram.D2Job
	if err := json.Unmarshal(input, &job); err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	return d2SVG(context.Background(), job.Source, job.Shapes)
}

// checkShapes refuses more shapes and connections in g, over all its
// boards, than max.
func checkShapes(g *d2graph.Graph, max int) error {
	if n := shapes(g); n > max {
		return &diagram.LimitError{What: fmt.Sprintf("shapes and connections (%d)", n), Limit: fmt.Sprint(max)}
	}
	return nil
}

func shapes(g *d2graph.Graph) int {
	n := len(g.Objects) + len(g.Edges)
	for _, boards := range [][]*d2graph.Graph{g.Layers, g.Scenarios, g.Steps} {
		for _, b := range boards {
			n += shapes(b)
		}
	}
	return n
}

// d2SVG renders source to SVG, in this process, once its shapes and
// connections are found to be at most maxShapes: its compiler's errors,
// and a graph too big to lay out, are the agent's to read before any
// layout starts.
func d2SVG(ctx context.Context, source string, maxShapes int) ([]byte, error) {
	g, _, err := d2compiler.Compile("", strings.NewReader(source), &d2compiler.CompileOptions{FS: noFiles{}})
	if err != nil {
		return nil, err
	}
	if err := checkShapes(g, maxShapes); err != nil {
		return nil, err
	}
	ruler, err := textmeasure.NewRuler()
	if err != nil {
		return nil, fmt.Errorf("fonts: %w", err)
	}
	ctx = d2log.With(ctx, slog.New(slog.DiscardHandler))
	pad := int64(16)
	opts := &d2svg.RenderOpts{Pad: &pad}
	diagram, _, err := d2lib.Compile(ctx, source, &d2lib.CompileOptions{
		FS:             noFiles{},
		Ruler:          ruler,
		LayoutResolver: dagreOnly,
	}, opts)
	if err != nil {
		return nil, err
	}
	return d2svg.Render(diagram, opts)
}

// dagreOnly is the one layout engine offered: ELK would add its own
// JavaScript bundle, TALA is proprietary and external.
func dagreOnly(engine string) (d2graph.LayoutGraph, error) {
	if engine != "" && engine != "dagre" {
		return nil, fmt.Errorf("layout engine %q: %w (dagre only)", engine, diagram.ErrUnsupported)
	}
	return d2dagrelayout.DefaultLayout, nil
}
