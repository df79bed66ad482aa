package goedit

import (
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"slices"
	"strings"
)

// splice is a replacement of src[start:end].
type splice struct {
	start, end int
	text       string
}

// apply makes the splices, which must not overlap, and gofmts the
// result.
func apply(name string, src []byte, splices []splice) ([]byte, error) {
	slices.SortFunc(splices, func(a, b splice) int { return a.start - b.start })
	var b strings.Builder
	at := 0
	for _, s := range splices {
		if s.start < at {
			return nil, errors.New("internal error: overlapping edits")
		}
		b.Write(src[at:s.start])
		b.WriteString(s.text)
		at = s.end
	}
	b.Write(src[at:])
	out, err := format.Source([]byte(b.String()))
	if err != nil {
		// The fragments parsed alone; together they must too. If not,
		// say so rather than write a file that does not parse.
		return nil, &SyntaxError{What: "the edited " + name, Err: err}
	}
	return out, nil
}

func offset(fset *token.FileSet, p token.Pos) int { return fset.Position(p).Offset }

// EditBody replaces the body of the function spec names (see the
// package doc for the forms) with body: the statements, with or without
// their enclosing braces. A function declared without a body (its code
// is in assembly, or linked in) is refused: giving it one changes what
// it is, and the build.
func EditBody(name string, src []byte, spec, body string) ([]byte, error) {
	fset, f, err := parseFile(name, src)
	if err != nil {
		return nil, err
	}
	fd, err := findFunc(fset, f, spec)
	if err != nil {
		return nil, err
	}
	if fd.Body == nil {
		return nil, fmt.Errorf("%s is declared without a body (implemented outside Go, e.g. in assembly); there is no body to replace", describe(fset, fd))
	}
	block, err := parseBody(body)
	if err != nil {
		return nil, err
	}
	out, err := apply(name, src, []splice{{offset(fset, fd.Body.Lbrace), offset(fset, fd.Body.Rbrace) + 1, block}})
	if err != nil {
		return nil, err
	}
	return out, checkDecls(name, f, out)
}

// InsertAfterMethod inserts decl, one method on recv, after recv's
// method named method, with a blank line between. A method of decl's
// name already on recv in this file is refused.
func InsertAfterMethod(name string, src []byte, recv, method, decl string) ([]byte, error) {
	fset, f, err := parseFile(name, src)
	if err != nil {
		return nil, err
	}
	if !refPlain().MatchString(recv) {
		return nil, fmt.Errorf("receiver_type %q: want a type name, such as Server (no * or type parameters)", clip(recv))
	}
	if !refPlain().MatchString(method) {
		return nil, fmt.Errorf("method_name %q: want a method name", clip(method))
	}
	anchor, err := findFunc(fset, f, recv+"."+method)
	if err != nil {
		return nil, err
	}
	fd, err := parseMethod(decl, recv)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		if o, ok := d.(*ast.FuncDecl); ok && o.Recv != nil && recvTypeName(o) == recv && o.Name.Name == fd.Name.Name {
			return nil, fmt.Errorf("%s already has a method %s (line %d)", recv, fd.Name.Name, fset.Position(o.Pos()).Line)
		}
	}
	at := lineEnd(src, offset(fset, anchor.End()))
	out, err := apply(name, src, []splice{{at, at, "\n\n" + strings.TrimSpace(decl) + "\n"}})
	if err != nil {
		return nil, err
	}
	if err := checkDecls(name, f, out, "func "+fd.Name.Name); err != nil {
		return nil, err
	}
	return out, nil
}

// lineEnd is where to insert after a declaration ending at off: the end
// of its line when only a comment follows it there, else off.
func lineEnd(src []byte, off int) int {
	rest := src[off:]
	nl := slices.Index(rest, '\n')
	if nl < 0 {
		nl = len(rest)
	}
	line := strings.TrimSpace(string(rest[:nl]))
	if line == "" || strings.HasPrefix(line, "//") {
		return off + nl
	}
	return off
}

// ChangeSignature replaces the signature of the function spec names with
// sig ("func F(x int) error", "func (r *T) M() error"; the "func" may be
// left out). The name must stay (renaming is rename_symbol's: it
// updates the references), and a method keeps its receiver's type, a
// function stays a function; the receiver's name and pointerness, type
// parameters, parameters and results may change.
func ChangeSignature(name string, src []byte, spec, sig string) ([]byte, error) {
	fset, f, err := parseFile(name, src)
	if err != nil {
		return nil, err
	}
	fd, err := findFunc(fset, f, spec)
	if err != nil {
		return nil, err
	}
	sp, err := signatureSplice(fset, fd, sig)
	if err != nil {
		return nil, err
	}
	out, err := apply(name, src, []splice{sp})
	if err != nil {
		return nil, err
	}
	return out, checkDecls(name, f, out)
}

// signatureSplice checks sig against fd and returns the splice that puts
// it in place of fd's signature (from "func" to the end of its results,
// the doc comment and body left as they are).
func signatureSplice(fset *token.FileSet, fd *ast.FuncDecl, sig string) (splice, error) {
	s, err := parseSignature(sig)
	if err != nil {
		return splice{}, err
	}
	nd := s.decl
	switch {
	case nd.Name.Name != fd.Name.Name:
		return splice{}, fmt.Errorf("new_signature names %s, not %s; to rename, use rename_symbol, which updates the references", nd.Name.Name, fd.Name.Name)
	case (fd.Recv == nil) != (nd.Recv == nil):
		if fd.Recv == nil {
			return splice{}, fmt.Errorf("%s is a function; new_signature gives it a receiver", fd.Name.Name)
		}
		return splice{}, fmt.Errorf("%s is a method of %s; new_signature drops the receiver", fd.Name.Name, recvTypeName(fd))
	case fd.Recv != nil && recvTypeName(nd) != recvTypeName(fd):
		return splice{}, fmt.Errorf("%s is a method of %s; new_signature moves it to %s", fd.Name.Name, recvTypeName(fd), recvTypeName(nd))
	}
	end := fd.Type.End()
	return splice{offset(fset, fd.Pos()), offset(fset, end), s.text}, nil
}

// checkDecls parses the edited file and checks it declares what the
// original did, plus added: a last guard that an edit replaced one node
// and did not spill into its neighbours.
//
// The edited file is not held to the input limits: its parts were, and
// a body nested as deep as allowed, in a function, nests a level deeper.
func checkDecls(name string, before *ast.File, after []byte, added ...string) error {
	_, f, err := parseChecked(name, after)
	if err != nil {
		return err
	}
	want := declNames(before)
	want = append(want, added...)
	got := declNames(f)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("internal check failed: the edit changed the file's declarations from %v to %v; nothing was written", want, got)
	}
	return nil
}

func declNames(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names = append(names, "func "+d.Name.Name)
		case *ast.GenDecl:
			names = append(names, d.Tok.String())
		}
	}
	return names
}
