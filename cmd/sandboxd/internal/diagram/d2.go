package diagram

import (
	"context"
	"encoding/json"
	"errors"
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
)

// ErrImport is why a D2 import ("...@file") fails: the source may name
// no file at all, in the workspace or out of it.
var ErrImport = errors.New("D2 imports are not allowed: put everything in one source")

// noFiles is the file system D2 imports are opened from: it holds
// nothing. Without one, d2 opens import paths with os.Open.
type noFiles struct{}

func (noFiles) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: ErrImport}
}

// renderD2 renders source in a child process (this executable, see
// child.Serve): D2's compiler takes time cubic in the source's nesting
// (a thousand nested maps, four seconds; four thousand, six minutes),
// and its layout runs dagre in a JavaScript interpreter that takes no
// context, where a dense graph of fifty shapes can keep it busy for
// minutes. A process can be killed at the time limit, when the call is
// cancelled and when sandboxd shuts down; a goroutine could only be
// abandoned, still burning a core.
func (r *Renderer) renderD2(ctx context.Context, source string) (*Image, error) {
	if err := checkNesting(D2, source, r.Limits.Nesting); err != nil {
		return nil, err
	}
	job, err := json.Marshal(d2Job{Source: source, Shapes: r.Limits.Shapes})
	if err != nil {
		return nil, err
	}
	svg, err := child.Call(ctx, r.Self, childD2, childLimits(r.Limits), job)
	switch {
	case errors.Is(err, child.ErrNoExecutable):
		return nil, fmt.Errorf("d2: %w: %w", ErrUnsupported, err)
	case err != nil:
		return nil, fmt.Errorf("d2: %w", limitError(err, r.Limits))
	}
	return &Image{Format: SVG, Data: svg}, nil
}

// checkShapes refuses more shapes and connections in g, over all its
// boards, than max.
func checkShapes(g *d2graph.Graph, max int) error {
	if n := shapes(g); n > max {
		return &LimitError{What: fmt.Sprintf("shapes and connections (%d)", n), Limit: fmt.Sprint(max)}
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
		return nil, fmt.Errorf("layout engine %q: %w (dagre only)", engine, ErrUnsupported)
	}
	return d2dagrelayout.DefaultLayout, nil
}
