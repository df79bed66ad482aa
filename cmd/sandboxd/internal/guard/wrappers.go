package guard

import "strings"

// wrapper describes a command that runs the command in its arguments.
type wrapper struct {
	// valueFlags take the next argument as their value (unless written
	// -xVALUE or --flag=VALUE).
	valueFlags []string
	// positional is how many arguments after the flags are the
	// wrapper's own (the duration of timeout).
	positional int
	// assignments: NAME=value arguments are the wrapper's (env).
	assignments bool
}

// wrappers the guard looks through, to judge the command they run.
var wrappers = map[string]wrapper{
	"env":        {valueFlags: []string{"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, assignments: true},
	"command":    {},
	"exec":       {valueFlags: []string{"-a"}},
	"nohup":      {},
	"nice":       {valueFlags: []string{"-n", "--adjustment"}},
	"time":       {valueFlags: []string{"-f", "--format", "-o", "--output"}},
	"timeout":    {valueFlags: []string{"-s", "--signal", "-k", "--kill-after"}, positional: 1},
	"xargs":      {valueFlags: []string{"-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--replace", "--eof"}},
	"stdbuf":     {valueFlags: []string{"-i", "-o", "-e", "--input", "--output", "--error"}},
	"setsid":     {},
	"ionice":     {valueFlags: []string{"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}},
	"builtin":    {},
	"unbuffer":   {},
	"chronic":    {},
	"watch":      {valueFlags: []string{"-n", "--interval", "-d"}},
	"flock":      {valueFlags: []string{"-w", "--timeout", "-E", "--conflict-exit-code"}, positional: 1},
	"caffeinate": {},
	"busybox":    {},
}

// unwrap returns the command w runs from args, the wrapper's arguments,
// and a command string it runs through a shell (env -S), if any. ok is
// false when the arguments cannot be followed (an argument built at run
// time where a flag or command would be).
func (w wrapper) unwrap(args []arg) (rest []arg, script string, ok bool) {
	for len(args) > 0 {
		a := args[0]
		if !a.known {
			return nil, "", false
		}
		v := a.value
		switch {
		case v == "--":
			args = args[1:]
			return w.positionals(args)
		case w.assignments && !strings.HasPrefix(v, "-") && strings.Contains(v, "=") && isName(v[:strings.IndexByte(v, '=')]):
			args = args[1:]
			continue
		case !strings.HasPrefix(v, "-") || v == "-":
			return w.positionals(args)
		}
		args = args[1:]
		flag, value, joined := splitFlag(v, w.valueFlags)
		if flag == "" {
			continue // a flag of its own
		}
		if !joined {
			if len(args) == 0 || !args[0].known {
				return nil, "", false
			}
			value = args[0].value
			args = args[1:]
		}
		if flag == "-S" || flag == "--split-string" {
			script = value
		}
	}
	return nil, script, true
}

func (w wrapper) positionals(args []arg) ([]arg, string, bool) {
	if len(args) < w.positional {
		return nil, "", true
	}
	return args[w.positional:], "", true
}

// splitFlag matches v against flags that take a value: the flag it is,
// and its value when written in the same argument. flag is "" when v is
// none of them.
func splitFlag(v string, valueFlags []string) (flag, value string, joined bool) {
	for _, f := range valueFlags {
		switch {
		case v == f:
			return f, "", false
		case strings.HasPrefix(f, "--") && strings.HasPrefix(v, f+"="):
			return f, v[len(f)+1:], true
		case !strings.HasPrefix(f, "--") && strings.HasPrefix(v, f) && !strings.HasPrefix(v, "--"):
			return f, v[len(f):], true
		}
	}
	return "", "", false
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// shells run a command string given with -c; eval runs its arguments.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// shellScript is the command string of a shell's -c (in a flag group
// such as -ec or -lc too), if args give one.
func shellScript(args []arg) (string, bool) {
	for i, a := range args {
		if !a.known || !strings.HasPrefix(a.value, "-") || strings.HasPrefix(a.value, "--") {
			return "", false
		}
		if strings.Contains(a.value[1:], "c") {
			if i+1 < len(args) && args[i+1].known {
				return args[i+1].value, true
			}
			return "", false
		}
	}
	return "", false
}
