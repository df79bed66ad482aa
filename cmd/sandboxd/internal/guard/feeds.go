package guard

import (
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Commands that run code given to them other than as a command string
// of -c: on stdin (echo sudo id | sh, sh <<< 'sudo id'), in an
// interpreter's -c or -e, in a makefile, in a git alias or a git
// setting that names a program. The guard judges the code when it is
// written out in the line.

// stdinText is what stmt's command reads on stdin when a here-string or
// here-document gives it, and that is known.
func stdinText(stmt *syntax.Stmt) (string, bool) {
	for _, r := range stmt.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.WordHdoc:
			return resolve(r.Word)
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				return resolve(r.Hdoc)
			}
		}
	}
	return "", false
}

// pipeHead is the first command of the pipeline stmt, which reads what
// is piped into stmt.
func pipeHead(stmt *syntax.Stmt) *syntax.Stmt {
	for {
		b, ok := stmt.Cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe && b.Op != syntax.PipeAll {
			return stmt
		}
		stmt = b.X
	}
}

// checkFed judges the code stmt's command reads on stdin, text: a
// shell's script, an interpreter's program, a makefile.
func checkFed(stmt *syntax.Stmt, text string, depth int) *Refusal {
	call, ok := stmt.Cmd.(*syntax.CallExpr)
	if !ok || depth >= maxDepth {
		return nil
	}
	name, args, ok := final(resolveAll(call.Args))
	if !ok {
		return nil
	}
	switch {
	case shells[name]:
		if readsStdin(args, "") {
			r, _ := check(text, depth+1)
			return r
		}
	case name == "make" || name == "gmake":
		return judgeMake(args, text, depth)
	default:
		if flags, ok := interpreter(name); ok {
			if _, hasCode := interpreterCode(args, flags); !hasCode && readsStdin(args, flags) {
				return judgeCode(text, depth)
			}
		}
	}
	return nil
}

// final is the command args run once wrappers (env, timeout, ...) are
// looked through: its name and arguments.
func final(args []arg) (string, []arg, bool) {
	for len(args) > 0 && args[0].known {
		name := path.Base(args[0].value)
		w, isWrapper := wrappers[name]
		if !isWrapper {
			return name, args[1:], true
		}
		rest, _, ok := w.unwrap(args[1:])
		if !ok {
			return "", nil, false
		}
		args = rest
	}
	return "", nil, false
}

// readsStdin says whether a shell or interpreter given args runs what
// it reads on stdin: only options (none taking a command string, codes
// lists the interpreter's), then nothing, "-" or /dev/stdin.
func readsStdin(args []arg, codes string) bool {
	for _, a := range args {
		if !a.known {
			return false
		}
		switch v := a.value; {
		case v == "-" || v == "/dev/stdin":
			return true
		case v == "--":
			continue
		case !strings.HasPrefix(v, "-"):
			return false // a script file
		case codes == "" && !strings.HasPrefix(v, "--") && strings.Contains(v, "c"):
			return false // a command string
		}
	}
	return true
}

// interpreter says whether name is a language interpreter, and the
// letters of its options that take code: python -c, perl -e, ...
func interpreter(name string) (string, bool) {
	for _, p := range []struct{ prefix, flags string }{
		{"python", "c"}, {"pypy", "c"}, {"perl", "eE"}, {"ruby", "e"}, {"node", "ep"}, {"nodejs", "ep"},
		{"deno", ""}, {"php", "r"}, {"lua", "e"}, {"luajit", "e"}, {"tclsh", ""}, {"Rscript", "e"},
	} {
		if name == p.prefix || strings.HasPrefix(name, p.prefix) && strings.Trim(name[len(p.prefix):], "0123456789.") == "" {
			return p.flags, true
		}
	}
	return "", false
}

// interpreterCode is the code an interpreter's options give it: the
// value of -c (python -c CODE, -cCODE, -Bc CODE), or of --eval.
func interpreterCode(args []arg, flags string) (string, bool) {
	for i, a := range args {
		if !a.known {
			return "", false
		}
		v := a.value
		if v == "--eval" || v == "--print" || strings.HasPrefix(v, "--eval=") || strings.HasPrefix(v, "--print=") {
			if _, code, ok := strings.Cut(v, "="); ok {
				return code, true
			}
			if i+1 < len(args) && args[i+1].known {
				return args[i+1].value, true
			}
			return "", false
		}
		if !strings.HasPrefix(v, "-") || strings.HasPrefix(v, "--") || v == "-" {
			if strings.HasPrefix(v, "--") {
				continue
			}
			return "", false // the script: what follows is its arguments
		}
		if j := strings.IndexAny(v[1:], flags); flags != "" && j >= 0 {
			if rest := v[j+2:]; rest != "" {
				return rest, true
			}
			if i+1 < len(args) && args[i+1].known {
				return args[i+1].value, true
			}
			return "", false
		}
	}
	return "", false
}

// startsPrograms matches the signs that a program starts others: a
// module or function for it, or a call of one, as a word (filesystem
// and exec_prefix are not signs).
var startsPrograms = regexp.MustCompile("`|" +
	`\b(?:subprocess|child_process|popen|shell_exec|proc_open|passthru|pty\.spawn)\b|` +
	`\b(?:system|exec[a-z]*|spawn[a-z]*|run|call|check_output|check_call|qx)\s*[(\s"'\[{]`)

// judgeCode judges a program an interpreter runs: when it starts other
// programs, each of its string literals, escapes decoded, is judged as
// a command line (os.system("sudo id"), ["sudo", "id"]). A program
// that starts nothing passes, whatever its strings say.
func judgeCode(code string, depth int) *Refusal {
	if depth >= maxDepth || !startsPrograms.MatchString(strings.ToLower(code)) {
		return nil
	}
	for _, lit := range stringLiterals(code) {
		if r, _ := check(ansiC(lit), depth+1); r != nil {
			return r
		}
	}
	return nil
}

// stringLiterals are the contents of the '...', "..." and `...` strings
// in code, backslash escapes left for the caller.
func stringLiterals(code string) []string {
	var out []string
	for i := 0; i < len(code); i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := i + 1
		for ; j < len(code) && code[j] != q; j++ {
			if code[j] == '\\' {
				j++
			}
		}
		if j >= len(code) {
			break
		}
		out = append(out, code[i+1:j])
		i = j
	}
	return out
}

// judgeMake judges what make would run: the makefile of --eval, or of
// -f - when stdin gives it, and a SHELL= it is told to use.
func judgeMake(args []arg, stdin string, depth int) *Refusal {
	for i := 0; i < len(args); i++ {
		if !args[i].known {
			continue
		}
		v := args[i].value
		next := func() (string, bool) {
			if i+1 < len(args) && args[i+1].known {
				i++
				return args[i].value, true
			}
			return "", false
		}
		switch {
		case strings.HasPrefix(v, "--eval="):
			if r := judgeMakefile(v[len("--eval="):], depth); r != nil {
				return r
			}
		case v == "--eval":
			if text, ok := next(); ok {
				if r := judgeMakefile(text, depth); r != nil {
					return r
				}
			}
		case v == "-f" || v == "--file" || v == "--makefile" || strings.HasPrefix(v, "-f") || strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--makefile="):
			file := strings.TrimPrefix(v, "-f")
			if _, f, ok := strings.Cut(v, "="); ok {
				file = f
			} else if file == "" || strings.HasPrefix(v, "--") {
				file, _ = next()
			}
			if (file == "-" || file == "/dev/stdin") && stdin != "" {
				if r := judgeMakefile(stdin, depth); r != nil {
					return r
				}
			}
		case strings.HasPrefix(v, "SHELL="):
			if r := checkNested(v[len("SHELL="):], depth); r != nil {
				return r
			}
		}
	}
	return nil
}

// judgeMakefile judges the recipes of a makefile (tab-led lines, and
// what follows "target: ;"), its $(shell ...) calls and its SHELL.
func judgeMakefile(text string, depth int) *Refusal {
	for _, line := range strings.Split(text, "\n") {
		var cmds []string
		if strings.HasPrefix(line, "\t") {
			cmds = append(cmds, strings.TrimLeft(line, "\t @-+"))
		} else if _, after, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(after, "=") {
			if _, recipe, ok := strings.Cut(after, ";"); ok {
				cmds = append(cmds, recipe)
			}
		}
		if name, value, ok := strings.Cut(line, "="); ok && strings.TrimRight(strings.TrimSpace(name), ":?+") == "SHELL" {
			cmds = append(cmds, strings.TrimSpace(value))
		}
		for rest := line; ; {
			_, call, ok := strings.Cut(rest, "$(shell ")
			if !ok {
				break
			}
			end := strings.IndexByte(call, ')')
			if end < 0 {
				end = len(call)
			}
			cmds = append(cmds, call[:end])
			rest = call[end:]
		}
		for _, c := range cmds {
			if r := checkNested(strings.ReplaceAll(c, "$$", "$"), depth); r != nil {
				return r
			}
		}
	}
	return nil
}

// checkNested judges code one level deeper, within maxDepth.
func checkNested(code string, depth int) *Refusal {
	if depth >= maxDepth {
		return nil
	}
	r, _ := check(code, depth+1)
	return r
}

// gitProgramKeys are git settings whose value is a program git runs
// through the shell; gitProgramSuffixes end the names of such settings
// of a section's subsection (diff.NAME.command, filter.NAME.clean).
var (
	gitProgramKeys = map[string]bool{
		"core.pager": true, "core.editor": true, "core.sshcommand": true, "core.fsmonitor": true,
		"core.askpass": true, "sequence.editor": true, "diff.external": true, "gpg.program": true,
		"credential.helper": true, "uploadpack.packobjectshook": true, "web.browser": true,
		"gpg.ssh.program": true, "gpg.x509.program": true,
	}
	gitProgramSuffixes = []string{".command", ".driver", ".clean", ".smudge", ".process", ".cmd", ".textconv", ".path"}
	// gitProgramEnv are the variables git reads a program from.
	gitProgramEnv = map[string]bool{
		"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_PAGER": true, "GIT_EDITOR": true,
		"GIT_SEQUENCE_EDITOR": true, "GIT_EXTERNAL_DIFF": true, "GIT_ASKPASS": true,
		"PAGER": true, "EDITOR": true, "VISUAL": true,
	}
)

// judgeGit judges the programs a git command line sets: -c NAME=VALUE
// before the subcommand, and git config NAME VALUE (an alias set now
// runs at the next git command).
func judgeGit(args []arg, depth int) *Refusal {
	for i := 0; i < len(args); i++ {
		if !args[i].known {
			return nil
		}
		v := args[i].value
		switch {
		case v == "-c" && i+1 < len(args) && args[i+1].known:
			i++
			if r := judgeGitSetting(args[i].value, depth); r != nil {
				return r
			}
		case v == "-C" || v == "--config-env":
			i++
		case strings.HasPrefix(v, "-"):
		case v == "config":
			var pos []string
			for _, a := range args[i+1:] {
				if !a.known {
					return nil
				}
				if !strings.HasPrefix(a.value, "-") {
					pos = append(pos, a.value)
				}
			}
			if len(pos) >= 2 {
				return judgeGitSetting(pos[len(pos)-2]+"="+pos[len(pos)-1], depth)
			}
			return nil
		default:
			return nil // the subcommand: what follows is its own
		}
	}
	return nil
}

// judgeGitSetting judges NAME=VALUE when git runs VALUE: a shell alias
// (alias.x=!cmd) or a setting that names a program.
func judgeGitSetting(kv string, depth int) *Refusal {
	key, value, ok := strings.Cut(kv, "=")
	if !ok {
		return nil
	}
	key = strings.ToLower(key)
	program := gitProgramKeys[key]
	for _, s := range gitProgramSuffixes {
		program = program || strings.Count(key, ".") >= 2 && strings.HasSuffix(key, s)
	}
	switch {
	case strings.HasPrefix(key, "alias.") && strings.HasPrefix(value, "!"),
		strings.HasPrefix(key, "pager."), program:
		return checkNested(strings.TrimPrefix(value, "!"), depth)
	}
	return nil
}

// judgeGitEnv judges the variables set before a git command that name a
// program git runs (GIT_PAGER=..., GIT_CONFIG_VALUE_0=!...).
func judgeGitEnv(assigns []*syntax.Assign, depth int) *Refusal {
	for _, a := range assigns {
		if a.Name == nil || a.Value == nil {
			continue
		}
		name := a.Name.Value
		if !gitProgramEnv[name] && !strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
			continue
		}
		if v, ok := resolve(a.Value); ok {
			if r := checkNested(strings.TrimPrefix(v, "!"), depth); r != nil {
				return r
			}
		}
	}
	return nil
}

// judgeRunner judges the code a command's own arguments give it to run:
// an interpreter's -c, make's --eval or SHELL=, git's settings.
func judgeRunner(name string, args []arg, depth int) *Refusal {
	switch name {
	case "make", "gmake":
		return judgeMake(args, "", depth)
	case "git":
		return judgeGit(args, depth)
	}
	if flags, ok := interpreter(name); ok {
		if code, ok := interpreterCode(args, flags); ok {
			return judgeCode(code, depth)
		}
	}
	return nil
}
