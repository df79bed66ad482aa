package goedit

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"regexp"
	"strings"
	"sync"
)

// maxCandidates bounds the functions an error lists.
const maxCandidates = 20

// funcRef is a function as the agent names it: "Name" (a function, or
// else a method of that name if only one type has it), "Type.Method",
// "(Type).Method" or "(*Type).Method".
type funcRef struct {
	recv string // receiver's type name, "" for Name alone
	name string
}

// The patterns of a funcRef, compiled on first use: their Unicode
// classes took about 2 ms of every sandboxd start as package variables.
var (
	refMethod = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\(\s*\*?\s*([\pL_][\pL\pN_]*)\s*\)\.([\pL_][\pL\pN_]*)$`)
	})
	refDotted  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([\pL_][\pL\pN_]*)\.([\pL_][\pL\pN_]*)$`) })
	refPlain   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\pL_][\pL\pN_]*$`) })
	errNoFuncs = errors.New("the file declares no functions")
)

func parseRef(s string) (funcRef, error) {
	s = strings.TrimSpace(s)
	if m := refMethod().FindStringSubmatch(s); m != nil {
		return funcRef{recv: m[1], name: m[2]}, nil
	}
	if m := refDotted().FindStringSubmatch(s); m != nil {
		return funcRef{recv: m[1], name: m[2]}, nil
	}
	if refPlain().MatchString(s) {
		return funcRef{name: s}, nil
	}
	return funcRef{}, fmt.Errorf("function name %q: want Name, Type.Method or (*Type).Method", clip(s))
}

// recvTypeName is the name of a receiver's base type: T for T, *T,
// T[K], *T[K, V]; "" for a receiver it cannot name (a syntax error
// the parser let through).
func recvTypeName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.ParenExpr:
			t = x.X
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// Label names fd as function_name would: Name, Type.Method or
// (*Type).Method.
func Label(fd *ast.FuncDecl) string {
	name := fd.Name.Name
	if r := recvTypeName(fd); r != "" {
		if _, ptr := fd.Recv.List[0].Type.(*ast.StarExpr); ptr {
			name = "(*" + r + ")." + name
		} else {
			name = r + "." + name
		}
	}
	return name
}

// describe is fd's Label with its line.
func describe(fset *token.FileSet, fd *ast.FuncDecl) string {
	return fmt.Sprintf("%s (line %d)", Label(fd), fset.Position(fd.Pos()).Line)
}

// findFunc is the one declaration in f that ref names. Missing or
// ambiguous names fail with the candidates, so the agent can pick.
func findFunc(fset *token.FileSet, f *ast.File, spec string) (*ast.FuncDecl, error) {
	ref, err := parseRef(spec)
	if err != nil {
		return nil, err
	}
	var all, funcs, methods []*ast.FuncDecl
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		all = append(all, fd)
		if fd.Name.Name != ref.name {
			continue
		}
		switch r := recvTypeName(fd); {
		case fd.Recv == nil:
			funcs = append(funcs, fd)
		case ref.recv == "" || r == ref.recv:
			methods = append(methods, fd)
		}
	}
	match := methods
	if ref.recv == "" && len(funcs) > 0 {
		match = funcs // a plain name is a function first
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) > 1:
		return nil, fmt.Errorf("%q is ambiguous: it names %s; say which with Type.Method, or edit it with Edit", spec, list(fset, match))
	case len(all) == 0:
		return nil, errNoFuncs
	}
	return nil, fmt.Errorf("no function %q in the file; it declares %s", spec, list(fset, all))
}

func list(fset *token.FileSet, fds []*ast.FuncDecl) string {
	var names []string
	for i, fd := range fds {
		if i == maxCandidates {
			names = append(names, fmt.Sprintf("and %d more", len(fds)-i))
			break
		}
		names = append(names, describe(fset, fd))
	}
	return strings.Join(names, ", ")
}

// clip is the start of a long argument, for an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "..."
}
