package goedit

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// File is one Go file of a package: Name as the caller names it (a
// workspace-relative path), Src its content.
type File struct {
	Name string
	Src  []byte
}

// Site is a place in the package that uses the changed function.
type Site struct {
	File      string
	Line, Col int
	Text      string // the call (or reference) after the change, clipped
	Problem   string // the type checker's first complaint there, if any
}

func (s Site) String() string {
	out := fmt.Sprintf("%s:%d:%d: %s", s.File, s.Line, s.Col, s.Text)
	if s.Problem != "" {
		out += "  <- " + s.Problem
	}
	return out
}

// SignatureChange is the outcome of ChangeSignatureInPackage.
type SignatureChange struct {
	// Files is the new content of every file changed, the edited one
	// first.
	Files []File
	// Calls are the calls of the function in the package after the
	// change, each with what the type checker says is wrong there.
	Calls []Site
	// Refs are the other uses (a function value, a method expression),
	// which no argument list applies to.
	Refs []Site
	// Updated is how many calls got the new argument list.
	Updated int
	// Skipped names package files that do not parse: their uses are not
	// seen.
	Skipped []string
}

// ChangeSignatureInPackage changes the signature of spec in the file
// named file of pkg, as ChangeSignature does, and finds the calls of
// the function in pkg (the files of one package: its directory's files
// of the same package clause, tests included) by type-checking it. When
// callArgs is not nil, every call gets it as its new argument list,
// with $1, $2, ... standing for the call's old arguments, $* for all
// of them and $$ for a dollar sign; a call that spreads a slice (f(xs...)),
// calls nested in one another's arguments, or a $N the call has no
// argument for refuse the whole change. Then the package is
// type-checked again and each call reports its first type error.
//
// The type checks see only the package's own files: imports are not
// loaded, and what comes from them is left untyped and unchecked rather
// than reported. The package's own declarations are checked in full.
func ChangeSignatureInPackage(pkg []File, file, spec, sig string, callArgs *string) (*SignatureChange, error) {
	at := slices.IndexFunc(pkg, func(f File) bool { return f.Name == file })
	if at < 0 {
		return nil, fmt.Errorf("internal error: %s is not among the package's files", file)
	}
	p, err := parsePackage(pkg, at, true)
	if err != nil {
		return nil, err
	}
	fd, err := findFunc(p.fset, p.files[at], spec)
	if err != nil {
		return nil, err
	}
	sigSplice, err := signatureSplice(p.fset, fd, sig)
	if err != nil {
		return nil, err
	}
	splices := map[int][]splice{at: {sigSplice}}
	res := &SignatureChange{Skipped: p.skipped}
	if callArgs != nil {
		if len(p.skipped) > 0 {
			return nil, fmt.Errorf("cannot update the calls: %s do not parse, and calls there would be missed", strings.Join(p.skipped, ", "))
		}
		tmpl, err := parseTemplate(*callArgs)
		if err != nil {
			return nil, err
		}
		info := p.check()
		obj, _ := info.Defs[fd.Name].(*types.Func)
		if obj == nil {
			return nil, fmt.Errorf("internal error: %s has no type information", fd.Name.Name)
		}
		calls, _ := p.uses(info, obj)
		if err := nested(p.fset, calls); err != nil {
			return nil, err
		}
		for _, c := range calls {
			s, err := tmpl.splice(p, c)
			if err != nil {
				return nil, err
			}
			splices[c.file] = append(splices[c.file], s)
		}
		res.Updated = len(calls)
	}
	next := slices.Clone(pkg)
	order := []int{at}
	for i := range pkg {
		if _, ok := splices[i]; ok && i != at {
			order = append(order, i)
		}
	}
	for _, i := range order {
		out, err := apply(pkg[i].Name, pkg[i].Src, splices[i])
		if err != nil {
			return nil, err
		}
		next[i].Src = out
		res.Files = append(res.Files, next[i])
	}
	if err := checkDecls(file, p.files[at], next[at].Src); err != nil {
		return nil, err
	}
	res.Calls, res.Refs, err = report(next, at, spec)
	return res, err
}

// report type-checks the changed package and lists the uses of spec
// with the errors found on them.
func report(pkg []File, at int, spec string) (calls, refs []Site, err error) {
	p, err := parsePackage(pkg, at, false)
	if err != nil {
		return nil, nil, err
	}
	fd, err := findFunc(p.fset, p.files[at], spec)
	if err != nil {
		return nil, nil, err
	}
	info := p.check()
	obj, _ := info.Defs[fd.Name].(*types.Func)
	if obj == nil {
		return nil, nil, nil
	}
	cs, rs := p.uses(info, obj)
	site := func(u use) Site {
		pos := p.fset.Position(u.node.Pos())
		s := Site{File: pkg[u.file].Name, Line: pos.Line, Col: pos.Column, Text: oneLine(p.text(u.file, u.node))}
		for _, e := range p.errs {
			if e.Pos >= u.node.Pos() && e.Pos < u.node.End() {
				s.Problem, _, _ = strings.Cut(e.Msg, "\n")
				break
			}
		}
		return s
	}
	for _, c := range cs {
		calls = append(calls, site(c))
	}
	for _, r := range rs {
		refs = append(refs, site(r))
	}
	return calls, refs, nil
}

// pkgSyntax is a package's parsed files, the unparsable ones left out
// (nil), but for the edited one, which must parse.
type pkgSyntax struct {
	fset    *token.FileSet
	src     []File
	files   []*ast.File
	skipped []string
	errs    []types.Error // from the last check
}

// parsePackage parses pkg. A file over the input limits is skipped, but
// for the edited one (at), which is refused when checkAt is set; once
// edited it is not held to them (see checkDecls).
func parsePackage(pkg []File, at int, checkAt bool) (*pkgSyntax, error) {
	p := &pkgSyntax{fset: token.NewFileSet(), src: pkg, files: make([]*ast.File, len(pkg))}
	for i, f := range pkg {
		what := f.Name
		if i == at {
			what = "the file"
		}
		if err := checkFile(what, f.Src); err != nil && (checkAt || i != at) {
			if i == at {
				return nil, err
			}
			p.skipped = append(p.skipped, f.Name)
			continue
		}
		af, err := parser.ParseFile(p.fset, f.Name, f.Src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			if i == at {
				return nil, &SyntaxError{What: "the file", Err: firstErrors(err)}
			}
			p.skipped = append(p.skipped, f.Name)
			continue
		}
		p.files[i] = af
	}
	return p, nil
}

var errNoImports = errors.New("imports are not loaded")

type noImports struct{}

func (noImports) Import(string) (*types.Package, error) { return nil, errNoImports }

// check type-checks the package's own files, imports unloaded (see
// ChangeSignatureInPackage), and keeps the errors that are not about
// the imports.
func (p *pkgSyntax) check() *types.Info {
	info := &types.Info{
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	p.errs = nil
	conf := types.Config{
		Importer:    noImports{},
		FakeImportC: true,
		Error: func(err error) {
			if te, ok := err.(types.Error); ok && !errors.Is(err, errNoImports) && !strings.Contains(te.Msg, "could not import") {
				p.errs = append(p.errs, te)
			}
		},
	}
	var files []*ast.File
	for _, f := range p.files {
		if f != nil {
			files = append(files, f)
		}
	}
	name := "p"
	if len(files) > 0 {
		name = files[0].Name.Name
	}
	// The errors are in p.errs; the info is filled in all the same.
	_, _ = conf.Check(name, p.fset, files, info)
	return info
}

// use is a call of the function (node a *ast.CallExpr) or another
// reference to it (node the identifier).
type use struct {
	file int
	node ast.Node
	call *ast.CallExpr
	expr bool // a method expression, T.M(recv, ...)
}

// uses finds obj's calls and other references in the package.
func (p *pkgSyntax) uses(info *types.Info, obj *types.Func) (calls, refs []use) {
	is := func(id *ast.Ident) bool {
		f, ok := info.Uses[id].(*types.Func)
		return ok && f.Origin() == obj
	}
	for i, f := range p.files {
		if f == nil {
			continue
		}
		inCall := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, sel := callee(call.Fun)
			if id == nil || !is(id) {
				return true
			}
			inCall[id] = true
			u := use{file: i, node: call, call: call}
			if sel != nil {
				if s := info.Selections[sel]; s != nil && s.Kind() == types.MethodExpr {
					u.expr = true
				}
			}
			calls = append(calls, u)
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && !inCall[id] && is(id) {
				refs = append(refs, use{file: i, node: id})
			}
			return true
		})
	}
	return calls, refs
}

// callee is the identifier a call's function expression names: F, x.M,
// F[int], (F).
func callee(fun ast.Expr) (*ast.Ident, *ast.SelectorExpr) {
	for {
		switch x := fun.(type) {
		case *ast.ParenExpr:
			fun = x.X
		case *ast.IndexExpr:
			fun = x.X
		case *ast.IndexListExpr:
			fun = x.X
		case *ast.Ident:
			return x, nil
		case *ast.SelectorExpr:
			return x.Sel, x
		default:
			return nil, nil
		}
	}
}

// nested refuses calls inside one another's arguments: the new argument
// lists would be spliced over each other.
func nested(fset *token.FileSet, calls []use) error {
	for _, a := range calls {
		for _, b := range calls {
			if a.file == b.file && a.call != b.call && b.call.Pos() >= a.call.Lparen && b.call.End() <= a.call.Rparen {
				return fmt.Errorf("cannot update the calls: the call at %s is inside the arguments of the call at %s; update these by hand",
					fset.Position(b.call.Pos()), fset.Position(a.call.Pos()))
			}
		}
	}
	return nil
}

func (p *pkgSyntax) text(file int, n ast.Node) string {
	src := p.src[file].Src
	return string(src[offset(p.fset, n.Pos()):offset(p.fset, n.End())])
}

// oneLine is code for a one-line listing.
func oneLine(s string) string {
	return clip(strings.Join(strings.Fields(s), " "))
}
