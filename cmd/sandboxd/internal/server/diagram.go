package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram"
)

// errReadOnlyOutput refuses output_path on a read-only server.
var errReadOnlyOutput = errors.New("output_path: this server is read-only; render without it")

// registerDiagramTools adds render_diagram. It changes nothing unless
// output_path is given, so read-only servers have it too, without
// output_path.
func (s *Server) registerDiagramTools(m *mcpserver.MCPServer, ws []mcp.ToolOption) {
	r := newDiagramRenderer(s.cfg.RunAs)
	addReplyTool(s, m, mcp.NewTool("render_diagram", append(ws,
		mcp.WithDescription("Render a diagram and see it: the image comes back in the result (SVG as image/svg+xml, PNG as image/png). language dot is Graphviz (svg or png), d2 is D2 (svg only); mermaid cannot be rendered here. The source may reference no file: Graphviz images and shapefiles are refused, D2 imports are refused, D2 icons stay URLs in the SVG and are never fetched."+diagramFileNote(s.cfg.ReadOnly)),
		mcp.WithString("language", mcp.Required(), mcp.Enum(string(diagram.DOT), string(diagram.D2), string(diagram.Mermaid)), mcp.Description("The source's language: dot (Graphviz), d2, or mermaid (refused: no renderer here)")),
		mcp.WithString("source", mcp.Required(), mcp.Description("The diagram's source text")),
		mcp.WithString("format", mcp.Enum(string(diagram.SVG), string(diagram.PNG)), mcp.Description("The image format: svg (default) or png (dot only)")),
		mcp.WithString("output_path", mcp.Description("Write the image to this file in the workspace instead of .sandboxd/diagrams (overwriting needs a Read or an earlier write of it in this session, as Write does)")),
	)...), func(ctx context.Context, a renderDiagramArgs) (reply, error) {
		return s.renderDiagram(ctx, r, a)
	})
}

// diagramFileNote says, in render_diagram's description, where the
// image is written.
func diagramFileNote(readOnly bool) string {
	if readOnly {
		return " This server is read-only: nothing is written to the workspace."
	}
	return " The image is also written into the workspace, and the text of the result says where and how big it is: by default to .sandboxd/diagrams/diagram-HASH.svg (or .png), named for its content; with output_path to that file, as Write would write it."
}

// newDiagramRenderer finds dot on the daemon's own PATH (never the
// agent's: a workspace directory on that PATH could hold a "dot" of the
// agent's making) and renders D2 in children of the helper next to
// this executable.
func newDiagramRenderer(runAs *syscall.Credential) *diagram.Renderer {
	dot, err := exec.LookPath("dot")
	if err != nil {
		dot = ""
	}
	lim := diagramLimits
	lim.Credential = runAs
	return diagram.New(dot, diagramHelper(), lim)
}

// diagramHelper is the executable that renders D2: diagram.Helper next
// to sandboxd's, held open from the first call on (see
// diagram.HoldHelper); "" when it is not there. The tests make it their
// own binary.
var diagramHelper = sync.OnceValue(func() string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	return diagram.HoldHelper(diagram.HelperNextTo(self))
})

// diagramLimits bound every render; tests lower them (never from a
// parallel test: servers read them when they start).
var diagramLimits = diagram.DefaultLimits

type renderDiagramArgs struct {
	inWorkspace
	Language   string  `json:"language" mcp:"required"`
	Source     string  `json:"source" mcp:"required"`
	Format     *string `json:"format"` // default svg
	OutputPath string  `json:"output_path"`
}

func (s *Server) renderDiagram(ctx context.Context, r *diagram.Renderer, a renderDiagramArgs) (reply, error) {
	lang, outPath := a.Language, a.OutputPath
	format := diagram.SVG
	if a.Format != nil {
		format = diagram.Format(*a.Format)
	}
	if outPath != "" && s.cfg.ReadOnly {
		return reply{}, errReadOnlyOutput
	}
	sp, err := s.space(a.Workspace)
	if err != nil {
		return reply{}, err
	}
	// A secret in the source would be drawn into the image, where a PNG's
	// pixels cannot be scrubbed: scrub the source before it is drawn.
	img, err := r.Render(ctx, diagram.Language(lang), format, s.scrubbed(a.Source))
	if err != nil {
		return reply{}, err
	}
	data := img.Data
	if format == diagram.SVG {
		// The SVG is scrubbed here, not only on its way out, so that the
		// file written is the image returned.
		data = []byte(s.scrubbed(string(data)))
	}
	text := fmt.Sprintf("Rendered %s to %s (%d bytes).", lang, format, len(data))
	switch {
	case outPath != "":
		wrote, err := sp.files.Write(s.ledger(ctx), outPath, string(data))
		if err != nil {
			return reply{}, err
		}
		text += "\n" + wrote
	case s.cfg.ReadOnly:
		text += "\nThe image is not written to the workspace: this server is read-only."
	default:
		text += "\n" + s.saveDiagram(ctx, sp, data, format)
	}
	if img.Warnings != "" {
		text += "\nThe renderer warned:\n" + img.Warnings
	}
	return reply{text: text, image: data, mime: format.MIME()}, nil
}

// diagramDir is where render_diagram writes an image without
// output_path, relative to the workspace: a client that keeps only the
// text of a result (PromptKit does) learns where to find it.
const diagramDir = ".sandboxd/diagrams"

// diagramIgnore keeps sandboxd's directory out of git: a commit of
// everything should not take the diagrams along.
const diagramIgnore = "# Written by sandboxd (render_diagram); ignored by git.\n*\n"

// saveDiagram writes an image rendered without output_path into
// diagramDir, named for its content, and says where; or, when it could
// not (the directory leads out of the workspace, the image holds a
// redaction marker), why not: the image is in the result all the same,
// so that is no reason to fail the call. The same image rendered again
// is the same file, left as it is.
func (s *Server) saveDiagram(ctx context.Context, sp *space, data []byte, format diagram.Format) string {
	sum := sha256.Sum256(data)
	rel := path.Join(diagramDir, "diagram-"+hex.EncodeToString(sum[:8])+"."+string(format))
	abs := filepath.Join(sp.ws.Dir(), filepath.FromSlash(rel))
	if fi, err := sp.ws.Stat(rel); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		if old, err := sp.ws.ReadFile(rel); err == nil && bytes.Equal(old, data) {
			return fmt.Sprintf("The image (%d bytes) is in the workspace at %s.", len(data), abs)
		}
	}
	ignore := path.Join(path.Dir(diagramDir), ".gitignore")
	if _, err := sp.ws.Lstat(ignore); errors.Is(err, fs.ErrNotExist) {
		_, _ = sp.files.Write(s.ledger(ctx), ignore, diagramIgnore)
	}
	if _, err := sp.files.Write(s.ledger(ctx), rel, string(data)); err != nil {
		return fmt.Sprintf("The image was not written to the workspace (%v); output_path names a file to write it to.", err)
	}
	return fmt.Sprintf("Wrote the image (%d bytes) to %s.", len(data), abs)
}
