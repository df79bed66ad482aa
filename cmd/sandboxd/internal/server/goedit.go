package server

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/files"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/goedit"
)

// Bounds on what change_function_signature reads and lists.
const (
	maxPackageFiles = 1000
	maxSitesShown   = 50
)

// maxPackageBytes bounds the Go files of a package that
// change_function_signature reads, sends to its child and type-checks;
// tests lower it, as goEditLimits.
var maxPackageBytes = 16 << 20

// goEditor makes a server's structural edits, with the limits it
// started with.
type goEditor struct {
	goedit.Isolated
	maxPackageBytes int
}

// goEditLimits bound every edit's child process; tests lower them
// (never from a parallel test: servers read them when they start).
var goEditLimits = goedit.DefaultLimits

const goEditRule = " The file must have been Read in this session and not changed since. The text must parse as exactly that node and nothing more; the result is gofmt'd." + diagnosticsNote

const funcNameHelp = "The function: Name, or a method as Type.Method or (*Type).Method; a bare name that no plain function has picks the one method of that name"

// registerGoEditTools adds the structural Go edits. They change files,
// so read-only servers do not offer them.
func (s *Server) registerGoEditTools(m *mcpserver.MCPServer, ws []mcp.ToolOption) {
	// The edits run in children of this executable, where a runaway
	// parse or format is killed, not the daemon.
	// They run with the agent's rights (--run-as), as every helper does.
	lim := goEditLimits
	lim.Credential = s.cfg.RunAs
	ed := goEditor{goedit.Isolated{Self: child.Executable(), Limits: lim}, maxPackageBytes}
	tool := func(opts ...mcp.ToolOption) []mcp.ToolOption {
		return append(append(slices.Clone(ws), opts...), mcp.WithDestructiveHintAnnotation(true))
	}
	addTool(s, m, mcp.NewTool("edit_function_body", tool(
		mcp.WithDescription("Replace the body of a Go function or method, found by its syntax tree rather than by matching text. new_body is the statements, with or without the enclosing braces; it must be exactly one function body (text that closes the function and declares more is refused). A function declared without a body (assembly) is refused."+goEditRule),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("The .go file")),
		mcp.WithString("function_name", mcp.Required(), mcp.Description(funcNameHelp)),
		mcp.WithString("new_body", mcp.Required(), mcp.Description("The new body")),
	)...), inSpace(s, withEditor(ed, s.editFunctionBody)))
	addTool(s, m, mcp.NewTool("insert_after_method", tool(
		mcp.WithDescription("Insert one new Go method right after an existing method of the same type. new_method must be exactly one method declaration (its doc comment may come with it) with a body, on a receiver of receiver_type (T or *T, with type parameters if the type has them); a method of that name already on the type in the file is refused."+goEditRule),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("The .go file")),
		mcp.WithString("receiver_type", mcp.Required(), mcp.Description("The type's name, e.g. Server (no * or type parameters)")),
		mcp.WithString("method_name", mcp.Required(), mcp.Description("The existing method to insert after")),
		mcp.WithString("new_method", mcp.Required(), mcp.Description("The new method's declaration")),
	)...), inSpace(s, withEditor(ed, s.insertAfterMethod)))
	addTool(s, m, mcp.NewTool("change_function_signature", tool(
		mcp.WithDescription("Change the signature of a Go function or method (type parameters, parameters, results; a method's receiver name and pointerness), keeping its name, doc comment and body. new_signature is the declaration without a body, e.g. func (s *Server) Run(ctx context.Context) error; renaming is refused (use rename_symbol). The result lists every call of the function in its package (the directory's files of the same package clause, tests included), each with the type error there, if any; with call_args, every call gets a new argument list first. The package's own files are type-checked; imports are not loaded, so what comes from them is not checked there (the diagnostics that follow are)."+goEditRule),
		mcp.WithString("file_path", mcp.Required(), mcp.Description("The .go file that declares the function")),
		mcp.WithString("function_name", mcp.Required(), mcp.Description(funcNameHelp)),
		mcp.WithString("new_signature", mcp.Required(), mcp.Description("The new signature, e.g. func Parse(s string, strict bool) (*Doc, error); the leading func may be left out")),
		mcp.WithString("call_args", mcp.Description("Rewrite every call in the package with this argument list: $1, $2, ... are the call's old arguments, $* all of them, $$ a dollar sign; e.g. \"ctx, $*\" adds a first argument. Refused, with nothing written, when a call spreads a slice (f(xs...)), is a method expression, sits inside another call's arguments, lacks an argument the list names, or does not stay one call.")),
	)...), inSpace(s, withEditor(ed, s.changeFunctionSignature)))
}

// withEditor gives a structural edit the server's editor.
func withEditor[A any](ed goEditor, f func(context.Context, goEditor, *space, A) (string, error)) spaceFunc[A] {
	return func(ctx context.Context, sp *space, args A) (string, error) {
		return f(ctx, ed, sp, args)
	}
}

// goSource is the Go file at path that a structural edit names, read
// under the read-before-write rule.
func (s *Server) goSource(ctx context.Context, sp *space, path string) (rel string, src []byte, err error) {
	if filepath.Ext(path) != ".go" {
		return "", nil, fmt.Errorf("%q is not a Go file (.go); use Edit", path)
	}
	rel, err = sp.ws.Rel(path)
	if err != nil {
		return "", nil, err
	}
	src, err = sp.files.ReadFresh(s.ledger(ctx), path)
	return rel, src, err
}

// writeGo writes one edited file as Edit would, and appends the
// diagnostics.
func (s *Server) writeGo(ctx context.Context, sp *space, path string, old, src []byte, done string) (string, error) {
	defer s.lspChanged(sp, path)
	if err := sp.files.Apply(s.ledger(ctx), []files.Change{{Path: path, Old: old, New: src}}); err != nil {
		return "", err
	}
	return done + s.diagnoseChanged(ctx, sp, path), nil
}

type editBodyArgs struct {
	inWorkspace
	FilePath     string `json:"file_path" mcp:"required"`
	FunctionName string `json:"function_name" mcp:"required"`
	NewBody      string `json:"new_body" mcp:"required"`
}

func (s *Server) editFunctionBody(ctx context.Context, ed goEditor, sp *space, a editBodyArgs) (string, error) {
	name := a.FunctionName
	rel, src, err := s.goSource(ctx, sp, a.FilePath)
	if err != nil {
		return "", err
	}
	out, err := ed.EditBody(ctx, rel, src, name, a.NewBody)
	if err != nil {
		return "", fmt.Errorf("edit_function_body %s in %s: %w", name, rel, err)
	}
	return s.writeGo(ctx, sp, a.FilePath, src, out, fmt.Sprintf("Replaced the body of %s in %s", name, rel))
}

type insertMethodArgs struct {
	inWorkspace
	FilePath     string `json:"file_path" mcp:"required"`
	ReceiverType string `json:"receiver_type" mcp:"required"`
	MethodName   string `json:"method_name" mcp:"required"`
	NewMethod    string `json:"new_method" mcp:"required"`
}

func (s *Server) insertAfterMethod(ctx context.Context, ed goEditor, sp *space, a insertMethodArgs) (string, error) {
	recv, method := a.ReceiverType, a.MethodName
	rel, src, err := s.goSource(ctx, sp, a.FilePath)
	if err != nil {
		return "", err
	}
	out, err := ed.InsertAfterMethod(ctx, rel, src, recv, method, a.NewMethod)
	if err != nil {
		return "", fmt.Errorf("insert_after_method %s.%s in %s: %w", recv, method, rel, err)
	}
	return s.writeGo(ctx, sp, a.FilePath, src, out, fmt.Sprintf("Inserted a method after %s.%s in %s", recv, method, rel))
}

type changeSignatureArgs struct {
	inWorkspace
	FilePath     string  `json:"file_path" mcp:"required"`
	FunctionName string  `json:"function_name" mcp:"required"`
	NewSignature string  `json:"new_signature" mcp:"required"`
	CallArgs     *string `json:"call_args"` // nil: calls are left as they are
}

func (s *Server) changeFunctionSignature(ctx context.Context, ed goEditor, sp *space, a changeSignatureArgs) (string, error) {
	name, sig, callArgs := a.FunctionName, a.NewSignature, a.CallArgs
	rel, src, err := s.goSource(ctx, sp, a.FilePath)
	if err != nil {
		return "", err
	}
	pkg, err := packageFiles(sp, rel, src, ed.maxPackageBytes)
	if err != nil {
		return "", fmt.Errorf("change_function_signature: %w", err)
	}
	res, err := ed.ChangeSignatureInPackage(ctx, pkg, rel, name, sig, callArgs)
	if err != nil {
		return "", fmt.Errorf("change_function_signature %s in %s: %w", name, rel, err)
	}
	before := map[string][]byte{}
	for _, f := range pkg {
		before[f.Name] = f.Src
	}
	changes := make([]files.Change, len(res.Files))
	paths := make([]string, len(res.Files))
	for i, f := range res.Files {
		changes[i] = files.Change{Path: f.Name, Old: before[f.Name], New: f.Src}
		paths[i] = f.Name
	}
	err = sp.files.Apply(s.ledger(ctx), changes)
	s.lspChanged(sp, paths...)
	if err != nil {
		return "", fmt.Errorf("change_function_signature: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Changed the signature of %s in %s", name, rel)
	if callArgs != nil {
		fmt.Fprintf(&b, "; updated %s in %s", count(res.Updated, "call"), count(len(res.Files), "file"))
	}
	broken := 0
	for _, c := range res.Calls {
		if c.Problem != "" {
			broken++
			if !slices.Contains(paths, c.File) {
				paths = append(paths, c.File)
			}
		}
	}
	fmt.Fprintf(&b, "\n%s in the package, %d with a type error:", count(len(res.Calls), "call"), broken)
	listSites(&b, res.Calls)
	if len(res.Refs) > 0 {
		fmt.Fprintf(&b, "\n%s that %s not calls (not updated):", count(len(res.Refs), "other reference"), plural(len(res.Refs), "is", "are"))
		listSites(&b, res.Refs)
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(&b, "\nNot searched, as they do not parse: %s", strings.Join(res.Skipped, ", "))
	}
	return b.String() + s.diagnoseChanged(ctx, sp, paths...), nil
}

func listSites(b *strings.Builder, sites []goedit.Site) {
	for i, site := range sites {
		if i == maxSitesShown {
			fmt.Fprintf(b, "\n(%d more not shown)", len(sites)-i)
			return
		}
		b.WriteString("\n" + site.String())
	}
}

// packageFiles is the package of the file at rel (holding src): the .go
// files of its directory with the same package clause, rel first. An
// external test package (name_test) is another package and is left
// out, as are files that are not regular (a symlink) and files over
// goedit's size limit; a package over maxBytes in all is refused, as all of it is sent to the edit's child and type-checked.
func packageFiles(sp *space, rel string, src []byte, maxBytes int) ([]goedit.File, error) {
	name := packageName(src)
	if name == "" {
		// goedit reports the syntax error.
		return []goedit.File{{Name: rel, Src: src}}, nil
	}
	dir := filepath.Dir(rel)
	d, err := sp.ws.Open(dir)
	if err != nil {
		return nil, err
	}
	entries, err := d.ReadDir(-1)
	_ = d.Close()
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	pkg := []goedit.File{{Name: rel, Src: src}}
	total := len(src)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !strings.HasSuffix(e.Name(), ".go") || !e.Type().IsRegular() || p == rel {
			continue
		}
		if len(pkg) == maxPackageFiles {
			return nil, fmt.Errorf("%s has over %d Go files", dir, maxPackageFiles)
		}
		if fi, err := e.Info(); err != nil || fi.Size() > goedit.MaxFileBytes {
			continue
		}
		data, err := sp.ws.ReadFile(p)
		if err != nil || packageName(data) != name {
			continue
		}
		if total += len(data); total > maxBytes {
			return nil, fmt.Errorf("the package's Go files in %s hold over %d bytes, the limit", dir, maxBytes)
		}
		pkg = append(pkg, goedit.File{Name: p, Src: data})
	}
	return pkg, nil
}

// packageName is a file's package clause, "" if it has none that parses.
func packageName(src []byte) string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.PackageClauseOnly)
	if err != nil {
		return ""
	}
	return f.Name.Name
}
