// Package guard catches footguns in the shell commands sandboxd's Bash
// tool is asked to run: privilege escalation, shutting the machine down,
// formatting or mounting file systems, deleting the root directory. It
// parses the command with a real shell parser (mvdan.cc/sh), so it judges
// the commands a line would run — in pipelines, lists, subshells,
// command substitutions, behind VAR=x prefixes and wrappers like env,
// timeout or xargs, in the strings of bash -c and eval, by path or by
// name, escaped, quoted, ANSI-C encoded ($'\x73udo') or brace-expanded
// ({sudo,}), or printed by a literal echo or printf in a command
// substitution ($(printf sud)o) — and not words that merely appear in
// arguments, strings or comments.
// Code handed over otherwise is judged where the line spells it out: a
// script piped or redirected into a shell, an interpreter's program
// that starts processes, a makefile, a program git is told to run
// (feeds.go). Paths are judged cleaned (/. is /) and $HOME, ${HOME},
// "$HOME" and ~ as the home directory. A command named by a relative
// path (./tools/mount) is the project's own and passes.
//
// It is a guard against mistakes, not a security boundary: a command
// built at run time from what the line does not show (eval of a
// variable, a script file) is not seen.
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
	if r, err := check(command, 0); err != nil {
		return err
	} else if r != nil {
		return r
	}
	return nil
}

// maxDepth bounds how deep the guard follows command strings run by
// shells within shells (bash -c "sh -c '...'").
const maxDepth = 4

func check(command string, depth int) (*Refusal, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		if depth > 0 {
			return nil, nil // a string a shell would reject: it runs nothing
		}
		return nil, fmt.Errorf("the command does not parse as bash: %w", err)
	}
	var refusal *Refusal
	syntax.Walk(f, func(n syntax.Node) bool {
		if refusal != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			args := resolveAll(n.Args)
			refusal = checkCall(args, depth)
			if refusal == nil && len(args) > 0 && args[0].known && path.Base(args[0].value) == "git" {
				refusal = judgeGitEnv(n.Assigns, depth)
			}
		case *syntax.Stmt:
			if text, ok := stdinText(n); ok {
				refusal = checkFed(n, text, depth)
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				if out, ok := printed(n.X); ok {
					refusal = checkFed(pipeHead(n.Y), out, depth)
				}
			}
		}
		return true
	})
	return refusal, nil
}

// checkCall judges one simple command: its name, seen through wrappers
// and the command strings of shells and eval.
func checkCall(args []arg, depth int) *Refusal {
	for len(args) > 0 {
		if !args[0].known {
			return nil // built at run time: not ours to guess
		}
		word := args[0].value
		if strings.Contains(word, "/") && !strings.HasPrefix(word, "/") {
			return nil // the project's own script (./tools/mount)
		}
		name := path.Base(word)
		if r := judge(name, word, args[1:]); r != nil {
			return r
		}
		if r := judgeRunner(name, args[1:], depth); r != nil {
			return r
		}
		if script, ok := commandString(name, args[1:]); ok {
			if depth >= maxDepth {
				return nil
			}
			r, _ := check(script, depth+1)
			return r
		}
		w, isWrapper := wrappers[name]
		if !isWrapper {
			return nil
		}
		rest, script, ok := w.unwrap(args[1:])
		if !ok {
			return nil
		}
		if script != "" && depth < maxDepth {
			if r, _ := check(script, depth+1); r != nil {
				return r
			}
		}
		args = rest
	}
	return nil
}

// commandString is the shell code a shell's -c or eval runs.
func commandString(name string, args []arg) (string, bool) {
	if name == "eval" {
		var parts []string
		for _, a := range args {
			if !a.known {
				return "", false
			}
			parts = append(parts, a.value)
		}
		return strings.Join(parts, " "), len(parts) > 0
	}
	if shells[name] {
		return shellScript(args)
	}
	return "", false
}
