package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	m.AddTool(mcp.NewTool("render_diagram", append(ws,
		mcp.WithDescription("Render a diagram and see it: the image comes back in the result (SVG as image/svg+xml, PNG as image/png). language dot is Graphviz (svg or png), d2 is D2 (svg only); mermaid cannot be rendered here. The source may reference no file: Graphviz images and shapefiles are refused, D2 imports are refused, D2 icons stay URLs in the SVG and are never fetched. With output_path the image is also written into the workspace, as Write would write it."),
		mcp.WithString("language", mcp.Required(), mcp.Enum(string(diagram.DOT), string(diagram.D2), string(diagram.Mermaid)), mcp.Description("The source's language: dot (Graphviz), d2, or mermaid (refused: no renderer here)")),
		mcp.WithString("source", mcp.Required(), mcp.Description("The diagram's source text")),
		mcp.WithString("format", mcp.Enum(string(diagram.SVG), string(diagram.PNG)), mcp.Description("The image format: svg (default) or png (dot only)")),
		mcp.WithString("output_path", mcp.Description("Also write the image to this file in the workspace (overwriting needs a Read or an earlier write of it in this session, as Write does)")),
	)...), s.replyHandler("render_diagram", func(ctx context.Context, req mcp.CallToolRequest) (reply, error) {
		return s.renderDiagram(ctx, r, req)
	}))
}

// newDiagramRenderer finds dot on the daemon's own PATH (never the
// agent's: a workspace directory on that PATH could hold a "dot" of the
// agent's making) and renders D2 in children of this executable.
func newDiagramRenderer(runAs *syscall.Credential) *diagram.Renderer {
	dot, err := exec.LookPath("dot")
	if err != nil {
		dot = ""
	}
	self, err := os.Executable()
	if err != nil {
		self = ""
	}
	lim := diagramLimits
	lim.Credential = runAs
	return diagram.New(dot, self, lim)
}

// diagramLimits bound every render; tests lower them (never from a
// parallel test: servers read them when they start).
var diagramLimits = diagram.DefaultLimits

func (s *Server) renderDiagram(ctx context.Context, r *diagram.Renderer, req mcp.CallToolRequest) (reply, error) {
	lang, err := req.RequireString("language")
	if err != nil {
		return reply{}, err
	}
	source, err := req.RequireString("source")
	if err != nil {
		return reply{}, err
	}
	format := diagram.Format(req.GetString("format", string(diagram.SVG)))
	outPath := req.GetString("output_path", "")
	if outPath != "" && s.cfg.ReadOnly {
		return reply{}, errReadOnlyOutput
	}
	sp, err := s.space(req.GetString("workspace", ""))
	if err != nil {
		return reply{}, err
	}
	// A secret in the source would be drawn into the image, where a PNG's
	// pixels cannot be scrubbed: scrub the source before it is drawn.
	img, err := r.Render(ctx, diagram.Language(lang), format, s.scrubbed(source))
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
	if outPath != "" {
		wrote, err := sp.files.Write(s.ledger(ctx), outPath, string(data))
		if err != nil {
			return reply{}, err
		}
		text += "\n" + wrote
	}
	if img.Warnings != "" {
		text += "\nThe renderer warned:\n" + img.Warnings
	}
	return reply{text: text, image: data, mime: format.MIME()}, nil
}
