package goedit

import (
	"fmt"
	"go/scanner"
	"go/token"
)

// Bounds on input, checked by one pass of Go's scanner (no parse)
// before anything is parsed: go/parser, go/printer and go/types recurse
// on the syntax tree, and gofmt indents each line as deep as it nests,
// so their time and memory grow with depth faster than with size (ten
// thousand nested blocks, 40 KB, took 5 s and 580 MiB to format; sixty
// thousand 1+1+... terms, 120 KB, three minutes). Real Go code nests a
// few dozen levels and chains tens of operators; sandboxd's own largest
// is 9 levels.
const (
	MaxFileBytes     = 4 << 20
	MaxFragmentBytes = 256 << 10
	// MaxNesting bounds how deep brackets ((, [, {) nest.
	MaxNesting = 512
	// MaxChain bounds the operators in one expression (a+b+..., a.b.c...,
	// f()()..., !!...): each is a level of the syntax tree too.
	MaxChain = 4000
)

// checkSize refuses text over max bytes: what names it ("the file",
// "new_body").
func checkSize(what string, n, max int) error {
	if n > max {
		return fmt.Errorf("%s is %d bytes, over the %d allowed", what, n, max)
	}
	return nil
}

// checkShape refuses src nested deeper than MaxNesting or with an
// expression longer than MaxChain.
func checkShape(what string, src []byte) error {
	depth, chain := shape(src)
	if depth > MaxNesting {
		return fmt.Errorf("%s nests %d levels deep; the limit is %d", what, depth, MaxNesting)
	}
	if chain > MaxChain {
		return fmt.Errorf("%s has an expression of %d operators; the limit is %d", what, chain, MaxChain)
	}
	return nil
}

// shape scans src once and returns how deep its brackets nest and the
// most operators in one expression. Text that does not scan (a $ in
// call_args) is scanned past.
func shape(src []byte) (depth, chain int) {
	fset := token.NewFileSet()
	var s scanner.Scanner
	s.Init(fset.AddFile("", -1, len(src)), src, func(token.Position, string) {}, 0)
	// chains[i] counts the operators of the expression open at bracket
	// depth i.
	chains := []int{0}
	closed := false // the last token closed a bracket: ( or [ next is a call or index on it
	for {
		_, tok, _ := s.Scan()
		if tok == token.EOF {
			return depth, chain
		}
		top := len(chains) - 1
		switch {
		case tok == token.LPAREN || tok == token.LBRACK || tok == token.LBRACE:
			if closed {
				chains[top]++
				chain = max(chain, chains[top])
			}
			chains = append(chains, 0)
			depth = max(depth, len(chains)-1)
		case tok == token.RPAREN || tok == token.RBRACK || tok == token.RBRACE:
			if top > 0 {
				chains = chains[:top]
			}
		case tok.IsOperator() && tok != token.SEMICOLON && tok != token.COMMA && tok != token.COLON && !isAssign(tok),
			tok == token.CHAN:
			chains[top]++
			chain = max(chain, chains[top])
		case tok == token.SEMICOLON || tok == token.COMMA || tok == token.COLON || isAssign(tok) || tok.IsKeyword():
			chains[top] = 0
		}
		closed = tok == token.RPAREN || tok == token.RBRACK
	}
}

func isAssign(tok token.Token) bool {
	return tok == token.ASSIGN || tok == token.DEFINE || (tok >= token.ADD_ASSIGN && tok <= token.AND_NOT_ASSIGN) ||
		tok == token.INC || tok == token.DEC || tok == token.ELLIPSIS
}
