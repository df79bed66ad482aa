package diagram

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Language is a diagram source language.
type Language string

// The languages Render knows; Mermaid is known only to be refused.
const (
	DOT     Language = "dot"
	D2      Language = "d2"
	Mermaid Language = "mermaid"
)

// Format is a rendered image's format.
type Format string

// The formats Render produces.
const (
	SVG Format = "svg"
	PNG Format = "png"
)

// MIME is the media type of an image in format f.
func (f Format) MIME() string {
	if f == PNG {
		return "image/png"
	}
	return "image/svg+xml"
}

// Limits bound one render.
type Limits struct {
	// Source caps the source, in bytes.
	Source int
	// Output caps the rendered image, in bytes.
	Output int
	// Timeout bounds the render.
	Timeout time.Duration
	// Pixels caps a PNG's width and height, each.
	Pixels int
	// Shapes caps a D2 diagram's shapes plus connections, which is what
	// its layout's time grows with.
	Shapes int
	// Memory caps a renderer process's address space, in bytes.
	Memory uint64
	// Nesting caps how deep a source's maps, subgraphs and attribute
	// lists nest (see checkNesting): D2's compiler takes time cubic in
	// it (a thousand levels, 4 s), and its layout more than that (ten
	// nested containers, 2.5 s; twenty, 8 s; fifty, over 20 s).
	Nesting int
	// Credential, when set, is the user the renderers run as (see
	// child.Limits).
	Credential *syscall.Credential
}

// DefaultLimits are generous for a diagram a person would read.
var DefaultLimits = Limits{
	Source:  256 << 10,
	Output:  4 << 20,
	Timeout: 20 * time.Second,
	Pixels:  8192,
	Shapes:  1000,
	Memory:  2 << 30,
	Nesting: 20,
}

// Renderer renders diagrams.
type Renderer struct {
	// Dot is the path of Graphviz's dot; empty when it is not installed.
	Dot string
	// Helper is the executable that renders D2 in a child process (see
	// the Helper constant and child.Serve); empty when it is not
	// installed.
	Helper string
	Limits Limits
}

// Image is a rendered diagram.
type Image struct {
	Format Format
	Data   []byte
	// Warnings are what the renderer said without failing (dot's
	// stderr), for the agent to read.
	Warnings string
}

// ErrUnsupported is wrapped by the refusal of a language or a format
// that cannot be rendered here.
var ErrUnsupported = errors.New("unsupported")

// LimitError is a render refused or stopped by one of its Limits.
type LimitError struct {
	What  string // "source", "image", "render time", "memory", "shapes ...", "nesting ...", "width/height ..."
	Limit string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("diagram %s over the limit of %s", e.What, e.Limit)
}

// Render renders source, in lang, to an image in format.
func (r *Renderer) Render(ctx context.Context, lang Language, format Format, source string) (*Image, error) {
	lim := r.Limits
	if format != SVG && format != PNG {
		return nil, fmt.Errorf("format %q: %w (svg or png)", format, ErrUnsupported)
	}
	if len(source) > lim.Source {
		return nil, &LimitError{What: "source", Limit: fmt.Sprintf("%d bytes", lim.Source)}
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	switch lang {
	case DOT:
		return r.renderDOT(ctx, format, source)
	case D2:
		if format == PNG {
			return nil, fmt.Errorf("d2 to png: %w: D2 rasterises through a headless browser, which sandboxd does not run; ask for svg", ErrUnsupported)
		}
		return r.renderD2(ctx, source)
	case Mermaid:
		return nil, fmt.Errorf("mermaid: %w: no Mermaid renderer is installed here (mermaid-cli needs Node packages and a browser); use dot or d2", ErrUnsupported)
	}
	return nil, fmt.Errorf("language %q: %w (dot or d2)", lang, ErrUnsupported)
}

// timedOut is the error for a render past its time limit.
func timedOut(lim Limits) error {
	return &LimitError{What: "render time", Limit: lim.Timeout.String()}
}

// New is a Renderer running dot at dotPath ("" if it is not installed)
// and D2 in children of helper (the same), within lim.
func New(dotPath, helper string, lim Limits) *Renderer {
	return &Renderer{Dot: dotPath, Helper: helper, Limits: lim}
}
