// Package guard catches footguns in the shell commands sandboxd's Bash
// tool is asked to run: privilege escalation, shutting the machine down,
// formatting or mounting file systems, deleting the root directory. It
// parses the command with a real shell parser (mvdan.cc/sh), so it judges
// the commands a line would run — in pipelines, lists, subshells,
// command substitutions, behind VAR=x prefixes and wrappers like env or
// nohup, by path or by name — and not words that merely appear in
// arguments, strings or comments.
//
// It is a guard against mistakes, not a security boundary: a command
// built at run time ($(printf sud)o, eval, a script file) is not seen.
// The container sandboxd runs in is the boundary.
package guard

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// denied maps a command name to why it is refused.
var denied = map[string]string{
	"sudo":      "privilege escalation: sandboxd runs commands as its own user",
	"su":        "privilege escalation: sandboxd runs commands as its own user",
	"doas":      "privilege escalation: sandboxd runs commands as its own user",
	"pkexec":    "privilege escalation: sandboxd runs commands as its own user",
	"shutdown":  "it stops the machine",
	"reboot":    "it restarts the machine",
	"poweroff":  "it stops the machine",
	"halt":      "it stops the machine",
	"mount":     "it changes the file systems the sandbox sees",
	"umount":    "it changes the file systems the sandbox sees",
	"mkfs":      "it formats a file system",
	"mkswap":    "it formats a swap area",
	"fdisk":     "it rewrites partition tables",
	"sfdisk":    "it rewrites partition tables",
	"parted":    "it rewrites partition tables",
	"wipefs":    "it erases file system signatures",
	"swapon":    "it changes the machine's swap",
	"swapoff":   "it changes the machine's swap",
	"systemctl": "it controls the machine's services",
	"chroot":    "it changes the root directory",
}

// wrappers run the command in their arguments; the guard looks through
// them. The value is how many leading non-flag arguments are theirs (the
// duration of timeout, the priority of nice -n is a flag's).
var wrappers = map[string]int{
	"env": 0, "command": 0, "exec": 0, "nohup": 0, "nice": 0, "time": 0, "timeout": 1,
	"xargs": 0, "stdbuf": 0, "setsid": 0, "ionice": 0, "builtin": 0, "unbuffer": 0,
}

// Refusal says which command was refused and why.
type Refusal struct {
	Command string // as written
	Name    string // the denylist entry it matched
	Reason  string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("refused: %q runs %s, which sandboxd's denylist blocks (%s); "+
		"this guard catches mistakes, it is not the security boundary (the container is)", r.Command, r.Name, r.Reason)
}

// Check parses command as bash and returns a *Refusal for the first
// denied command it would run, or an error if it does not parse.
func Check(command string) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return fmt.Errorf("the command does not parse as bash: %w", err)
	}
	var refusal *Refusal
	syntax.Walk(f, func(n syntax.Node) bool {
		if refusal != nil {
			return false
		}
		if call, ok := n.(*syntax.CallExpr); ok {
			refusal = checkCall(call.Args)
		}
		return true
	})
	if refusal != nil {
		return refusal
	}
	return nil
}

// checkCall judges one simple command: its name, seen through wrappers.
func checkCall(args []*syntax.Word) *Refusal {
	for len(args) > 0 {
		word, ok := literal(args[0])
		if !ok {
			return nil // built at run time: not ours to guess
		}
		name := path.Base(word)
		if r := judge(name, word, args[1:]); r != nil {
			return r
		}
		skip, isWrapper := wrappers[name]
		if !isWrapper {
			return nil
		}
		args = args[1:]
		// The wrapper's own flags and assignments (env A=1), then its
		// fixed arguments, then the command it runs.
		for len(args) > 0 {
			w, ok := literal(args[0])
			if !ok || !(strings.HasPrefix(w, "-") || (name == "env" && strings.Contains(w, "="))) {
				break
			}
			args = args[1:]
			if name == "nice" && (w == "-n" || w == "--adjustment") && len(args) > 0 {
				args = args[1:]
			}
		}
		for ; skip > 0 && len(args) > 0; skip-- {
			args = args[1:]
		}
	}
	return nil
}

// judge refuses name if it is denied, or a dangerous use of rm or kill.
func judge(name, word string, args []*syntax.Word) *Refusal {
	if reason, ok := denied[name]; ok {
		return &Refusal{Command: word, Name: name, Reason: reason}
	}
	if strings.HasPrefix(name, "mkfs.") {
		return &Refusal{Command: word, Name: name, Reason: denied["mkfs"]}
	}
	lits := literals(args)
	switch name {
	case "rm":
		recursive := false
		for _, a := range lits {
			if a == "--no-preserve-root" {
				return &Refusal{Command: word, Name: "rm --no-preserve-root", Reason: "it deletes the root directory"}
			}
			if a == "--recursive" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR")) {
				recursive = true
			}
		}
		for _, a := range lits {
			if recursive && (a == "/" || a == "/*" || a == "~" || a == "~/" || a == "$HOME") {
				return &Refusal{Command: word, Name: "rm -r " + a, Reason: "it deletes the root or home directory"}
			}
		}
	case "kill", "pkill", "killall":
		for _, a := range lits {
			if a == "-1" && name == "kill" {
				return &Refusal{Command: word, Name: "kill -1", Reason: "it signals every process sandboxd's user runs, sandboxd included"}
			}
		}
		if name == "killall" || name == "pkill" {
			for _, a := range lits {
				if a == "sandboxd" {
					return &Refusal{Command: word, Name: name + " sandboxd", Reason: "it stops sandboxd itself"}
				}
			}
		}
	}
	return nil
}

// literal is a word's value when it has no expansions: plain, quoted, or
// a mix ("/usr/bin/"'sudo').
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

func literals(ws []*syntax.Word) []string {
	var out []string
	for _, w := range ws {
		if s, ok := literal(w); ok {
			out = append(out, s)
		} else if len(w.Parts) == 1 {
			// $HOME stays visible as itself for the rm check.
			if pe, ok := w.Parts[0].(*syntax.ParamExp); ok && pe.Short && pe.Param != nil && pe.Param.Value == "HOME" {
				out = append(out, "$HOME")
			}
		}
	}
	return out
}
