package goedit

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"
)

// SyntaxError is a file or fragment that does not parse as what it must
// be; nothing was changed.
type SyntaxError struct {
	What string // "the file", "new_body", ...
	Err  error
}

func (e *SyntaxError) Error() string { return e.What + " does not parse: " + e.Err.Error() }
func (e *SyntaxError) Unwrap() error { return e.Err }

// checkFile refuses a file over the size and shape limits.
func checkFile(what string, src []byte) error {
	if err := checkSize(what, len(src), MaxFileBytes); err != nil {
		return err
	}
	return checkShape(what, src)
}

// parseFile parses a whole file, refusing one over the limits or with
// any syntax error: positions in a tree the parser had to patch up are
// no ground to edit on.
func parseFile(name string, src []byte) (*token.FileSet, *ast.File, error) {
	if err := checkFile("the file", src); err != nil {
		return nil, nil, err
	}
	return parseChecked(name, src)
}

// parseChecked is parseFile for a file already within the limits.
func parseChecked(name string, src []byte) (*token.FileSet, *ast.File, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, &SyntaxError{What: "the file", Err: firstErrors(err)}
	}
	return fset, f, nil
}

// firstErrors keeps the first few of a scanner.ErrorList: a broken file
// can have thousands.
func firstErrors(err error) error {
	var list scanner.ErrorList
	if !errors.As(err, &list) || len(list) <= 3 {
		return err
	}
	return fmt.Errorf("%w (and %d more errors)", list[:3], len(list)-3)
}

// checkFragment refuses an agent's fragment that is empty or over the
// limits.
func checkFragment(what, text string) error {
	if err := checkSize(what, len(text), MaxFragmentBytes); err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%s is empty", what)
	}
	return checkShape(what, []byte(text))
}

// fragmentPrefix makes a fragment a file; fragment positions are
// offsets past it.
const fragmentPrefix = "package p\n"

// parseFragment parses text as the declarations of a file and returns
// them, with text's offset in the parsed source.
func parseFragment(what, text string) (*token.FileSet, *ast.File, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, what, fragmentPrefix+text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, &SyntaxError{What: what, Err: firstErrors(err)}
	}
	return fset, f, nil
}

// parseBody turns new_body into the text of a block, braces included.
// It may be the statements alone or the block with its braces; either
// way it must be exactly one block: "return 1 }\nfunc Injected() {"
// closes the function and declares another, and is refused.
func parseBody(body string) (string, error) {
	if err := checkFragment("new_body", body); err != nil {
		return "", err
	}
	if t := strings.TrimSpace(body); strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		if block, ok := wholeBlock(t); ok {
			return block, nil
		}
	}
	block := "{\n" + body + "\n}"
	if _, ok := wholeBlock(block); ok {
		return block, nil
	}
	// Say why: the parser's own error, or that it holds more than a body.
	src := "func _() " + block
	fset, f, err := parseFragment("new_body", src)
	if err != nil {
		return "", err
	}
	return "", fmt.Errorf("new_body is not one function body: it ends the body and goes on with %s; give only the statements between the braces", whatFollows(fset, f))
}

// wholeBlock reports whether block parses as exactly one block, all of
// it: a file of one function whose body starts at the first byte of
// block and ends at its last.
func wholeBlock(block string) (string, bool) {
	const head = "func _() "
	fset, f, err := parseFragment("new_body", head+block)
	if err != nil || len(f.Decls) != 1 {
		return "", false
	}
	fd, ok := f.Decls[0].(*ast.FuncDecl)
	if !ok || fd.Body == nil || fd.Recv != nil || fd.Name.Name != "_" {
		return "", false
	}
	base := len(fragmentPrefix) + len(head)
	lb, rb := fset.Position(fd.Body.Lbrace).Offset, fset.Position(fd.Body.Rbrace).Offset
	if lb != base || rb != base+len(block)-1 {
		return "", false
	}
	return block, true
}

// whatFollows names the declarations after the first, for an error.
func whatFollows(fset *token.FileSet, f *ast.File) string {
	if len(f.Decls) < 2 {
		return "more text"
	}
	switch d := f.Decls[1].(type) {
	case *ast.FuncDecl:
		return "another declaration (func " + d.Name.Name + ")"
	case *ast.GenDecl:
		return "another declaration (" + d.Tok.String() + ")"
	}
	return "another declaration"
}

// parseMethod parses new_method as exactly one method declaration with
// a body (its doc comment may come with it) on a receiver of type recv.
func parseMethod(text, recv string) (*ast.FuncDecl, error) {
	if err := checkFragment("new_method", text); err != nil {
		return nil, err
	}
	fset, f, err := parseFragment("new_method", text)
	if err != nil {
		return nil, err
	}
	if len(f.Decls) != 1 || len(f.Imports) != 0 {
		return nil, fmt.Errorf("new_method must be exactly one method declaration; it holds %d declarations", len(f.Decls))
	}
	fd, ok := f.Decls[0].(*ast.FuncDecl)
	switch {
	case !ok:
		return nil, errors.New("new_method must be a method declaration (func (r T) Name(...) {...}), not a " + f.Decls[0].(*ast.GenDecl).Tok.String() + " declaration")
	case fd.Recv == nil:
		return nil, fmt.Errorf("new_method declares func %s without a receiver; give it one of type %s", fd.Name.Name, recv)
	case recvTypeName(fd) != recv:
		return nil, fmt.Errorf("new_method's receiver is of type %s, not %s", recvText(fset, fd), recv)
	case fd.Body == nil:
		return nil, fmt.Errorf("new_method %s has no body", fd.Name.Name)
	}
	return fd, nil
}

// signature is new_signature parsed: the declaration without a body.
type signature struct {
	text string // "func ..." as given, trimmed
	decl *ast.FuncDecl
}

// parseSignature parses text as exactly a function declaration without
// a body: "func F(x int) error" or "func (r *T) M() error", the leading
// "func" optional.
func parseSignature(text string) (signature, error) {
	if err := checkFragment("new_signature", text); err != nil {
		return signature{}, err
	}
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "func") || !isSpaceOrParen(t[len("func"):]) {
		t = "func " + t
	}
	fset, f, err := parseFragment("new_signature", t)
	if err != nil {
		return signature{}, err
	}
	if len(f.Decls) != 1 {
		return signature{}, fmt.Errorf("new_signature must be one function signature; it holds %d declarations", len(f.Decls))
	}
	fd, ok := f.Decls[0].(*ast.FuncDecl)
	switch {
	case !ok:
		return signature{}, errors.New("new_signature must be a function signature")
	case fd.Body != nil:
		return signature{}, errors.New("new_signature has a body; give the signature alone (edit the body with edit_function_body)")
	case fd.Doc != nil || len(f.Comments) > 0:
		return signature{}, errors.New("new_signature holds a comment; give the signature alone")
	}
	if end := fset.Position(fd.End()).Offset - len(fragmentPrefix); strings.TrimSpace(t[end:]) != "" {
		return signature{}, fmt.Errorf("new_signature has text after the signature: %q", clip(t[end:]))
	}
	return signature{text: t, decl: fd}, nil
}

func isSpaceOrParen(rest string) bool {
	return rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '('
}

// recvText is a receiver's type as written.
func recvText(fset *token.FileSet, fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return "(none)"
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, fd.Recv.List[0].Type); err != nil {
		return "(unprintable)"
	}
	return b.String()
}
