package diagram

import (
	"bytes"
	"context"
	"fmt"
	"image/png"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
)

// dotEnv is dot's environment (child.Run adds HOME and the locale).
// SERVER_NAME with GV_FILE_PATH unset is Graphviz's safe mode: safefile()
// refuses every file a graph names (image, shapefile, HTML <IMG SRC>,
// also under imagepath) before opening it.
var dotEnv = []string{"SERVER_NAME=sandboxd"}

func (r *Renderer) renderDOT(ctx context.Context, format Format, source string) (*Image, error) {
	if r.Dot == "" {
		return nil, fmt.Errorf("dot: %w: Graphviz is not installed (Debian package graphviz)", ErrUnsupported)
	}
	// cairo for PNG: gd's renderer would take fontpath/fontname as font
	// files to open.
	renderer := "-Tsvg"
	if format == PNG {
		renderer = "-Tpng:cairo"
	}
	if err := checkNesting(DOT, source, r.Limits.Nesting); err != nil {
		return nil, err
	}
	out, err := child.Run(ctx, child.Command{Path: r.Dot, Args: []string{renderer}, Env: dotEnv, Stdin: []byte(source)}, childLimits(r.Limits))
	switch {
	case err != nil:
		return nil, fmt.Errorf("dot: %w", limitError(err, r.Limits))
	case len(out.Stdout) == 0:
		return nil, fmt.Errorf("dot: rendered nothing:\n%s", out.Stderr)
	}
	if format == PNG {
		if err := checkPixels(out.Stdout, r.Limits.Pixels); err != nil {
			return nil, err
		}
	}
	return &Image{Format: format, Data: out.Stdout, Warnings: out.Stderr}, nil
}

// checkPixels refuses a PNG wider or taller than max: a client decoding
// it would need its width × height × 4 bytes, however small the file.
func checkPixels(data []byte, max int) error {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("dot png: %w", err)
	}
	if cfg.Width > max || cfg.Height > max {
		return &LimitError{What: fmt.Sprintf("width/height (%d×%d px)", cfg.Width, cfg.Height), Limit: fmt.Sprintf("%d px", max)}
	}
	return nil
}
