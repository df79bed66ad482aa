package goedit

import (
	"fmt"
	"go/ast"
	"go/parser"
	"strconv"
	"strings"
)

// template is call_args parsed: literal text and argument references
// (arg: 1-based index, or 0 for $*).
type template []struct {
	lit string
	arg int
}

// checkCallArgs refuses call_args over the limits: it is spliced into
// every call.
func checkCallArgs(s string) error {
	if err := checkSize("call_args", len(s), MaxFragmentBytes); err != nil {
		return err
	}
	return checkShape("call_args", []byte(s))
}

func parseTemplate(s string) (template, error) {
	if err := checkCallArgs(s); err != nil {
		return nil, err
	}
	var t template
	var lit strings.Builder
	flush := func(arg int) {
		t = append(t, struct {
			lit string
			arg int
		}{lit.String(), arg})
		lit.Reset()
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			lit.WriteByte(s[i])
			continue
		}
		switch j := i + 1; {
		case j < len(s) && s[j] == '$':
			lit.WriteByte('$')
			i = j
		case j < len(s) && s[j] == '*':
			flush(0)
			i = j
		default:
			k := j
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			n, err := strconv.Atoi(s[j:k])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("call_args: a $ must be followed by an argument number from 1, * or $ (at byte %d)", i)
			}
			flush(n)
			i = k - 1
		}
	}
	flush(-1)
	return t, nil
}

// splice is the new argument list of call c.
func (t template) splice(p *pkgSyntax, c use) (splice, error) {
	where := p.fset.Position(c.call.Pos())
	switch {
	case c.expr:
		return splice{}, fmt.Errorf("cannot update the calls: %s calls it as a method expression, whose first argument is the receiver; update it by hand", where)
	case c.call.Ellipsis.IsValid():
		return splice{}, fmt.Errorf("cannot update the calls: %s spreads a slice (...); update it by hand", where)
	}
	var args []string
	for _, a := range c.call.Args {
		args = append(args, p.text(c.file, a))
	}
	var b strings.Builder
	for _, part := range t {
		b.WriteString(part.lit)
		switch {
		case part.arg == 0:
			b.WriteString(strings.Join(args, ", "))
		case part.arg > len(args):
			return splice{}, fmt.Errorf("cannot update the calls: call_args uses $%d, but the call at %s has %d arguments", part.arg, where, len(args))
		case part.arg > 0:
			b.WriteString(args[part.arg-1])
		}
	}
	// The call with its new arguments must be one call expression and
	// nothing else: "x); os.Exit(1" is not an argument list.
	newCall := p.text(c.file, c.call.Fun) + "(" + b.String() + ")"
	e, err := parser.ParseExpr(newCall)
	if ce, ok := e.(*ast.CallExpr); err != nil || !ok || int(ce.Rparen) != len(newCall) {
		return splice{}, fmt.Errorf("call_args does not make a call at %s: %s", where, clip(newCall))
	}
	return splice{offset(p.fset, c.call.Lparen) + 1, offset(p.fset, c.call.Rparen), b.String()}, nil
}
