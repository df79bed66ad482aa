package guard

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// ansiC decodes the body of an ANSI-C quoted string, $'...': \x73,
// \163, \u0073 and the like are the characters they name, as bash makes
// them. A NUL ends the string, as it does in bash.
func ansiC(s string) string {
	out, _, err := expand.Format(nil, s, nil)
	if err != nil {
		return s
	}
	out, _, _ = strings.Cut(out, "\x00")
	return out
}

// maxPrinted bounds what the guard computes a literal echo or printf
// to print: a format repeated over many arguments must not cost more
// than the command it judges.
const maxPrinted = 1 << 16

// substOutput is what a command substitution prints when it is one
// literal echo or printf: $(printf sud) is "sud". Trailing newlines go,
// as the shell drops them.
func substOutput(c *syntax.CmdSubst) (string, bool) {
	if len(c.Stmts) != 1 {
		return "", false
	}
	out, ok := printed(c.Stmts[0])
	return strings.TrimRight(out, "\n"), ok
}

// printed is what stmt writes to its stdout when it is a literal echo or
// printf, with no redirection: known without running anything.
func printed(stmt *syntax.Stmt) (string, bool) {
	call, ok := stmt.Cmd.(*syntax.CallExpr)
	if !ok || len(stmt.Redirs) > 0 || len(call.Args) == 0 {
		return "", false
	}
	args := resolveAll(call.Args)
	for _, a := range args {
		if !a.known {
			return "", false
		}
	}
	switch args[0].value {
	case "echo":
		return echoed(values(args[1:]))
	case "printf":
		return printfed(values(args[1:]))
	}
	return "", false
}

func values(args []arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.value
	}
	return out
}

// echoed is what echo prints with args: its -n, -e and -E options read
// as bash's builtin reads them.
func echoed(args []string) (string, bool) {
	newline, escapes := true, false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
		for _, c := range args[0][1:] {
			switch c {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	out := strings.Join(args, " ")
	if escapes {
		out = ansiC(out)
	}
	if newline {
		out += "\n"
	}
	return out, len(out) <= maxPrinted
}

// printfed is what printf prints with args (format first): the format
// is reused while arguments remain, as printf does.
func printfed(args []string) (string, bool) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-v") {
		return "", false // nothing printed, or printed into a variable
	}
	format, rest := args[0], args[1:]
	var b strings.Builder
	for {
		out, used, err := expand.Format(nil, format, rest)
		if err != nil {
			return "", false
		}
		b.WriteString(out)
		rest = rest[used:]
		if used == 0 || len(rest) == 0 || b.Len() > maxPrinted {
			break
		}
	}
	return b.String(), b.Len() <= maxPrinted
}
