package guard

import (
	"path"
	"regexp"
	"strconv"
	"strings"
)

// judge refuses the command name (written as word) with args if it is
// denied, or a dangerous use of rm, kill, pkill or killall.
func judge(name, word string, args []arg) *Refusal {
	if reason, ok := denied[name]; ok {
		return &Refusal{Command: word, Name: name, Reason: reason}
	}
	if strings.HasPrefix(name, "mkfs.") {
		return &Refusal{Command: word, Name: name, Reason: denied["mkfs"]}
	}
	switch name {
	case "rm":
		return judgeRm(word, args)
	case "kill":
		return judgeKill(word, args)
	case "pkill", "killall":
		return judgeKillByName(name, word, args)
	}
	return nil
}

// judgeRm refuses a recursive rm of the root or home directory, or of
// everything in them, however the path is spelled.
func judgeRm(word string, args []arg) *Refusal {
	recursive, options := false, true
	var targets []string
	for _, a := range args {
		if !a.known {
			continue
		}
		v := a.value
		switch {
		case options && v == "--":
			options = false
		case options && v == "--no-preserve-root":
			return &Refusal{Command: word, Name: "rm --no-preserve-root", Reason: "it deletes the root directory"}
		case options && v == "--recursive":
			recursive = true
		case options && strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && len(v) > 1:
			if strings.ContainsAny(v, "rR") {
				recursive = true
			}
		case options && strings.HasPrefix(v, "--"):
		default:
			targets = append(targets, v)
		}
	}
	if !recursive {
		return nil
	}
	for _, t := range targets {
		if what, ok := rootOrHome(t); ok {
			return &Refusal{Command: word, Name: "rm -r " + what, Reason: "it deletes the root or home directory"}
		}
	}
	return nil
}

// rootOrHome says whether p, cleaned, is the root or home directory or
// all that is in one of them; what names it as the guard reports it.
func rootOrHome(p string) (what string, ok bool) {
	home := strings.HasPrefix(p, symHome) && (len(p) == len(symHome) || p[len(symHome)] == '/')
	if home {
		p = "/" + symHome + p[len(symHome):]
	}
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	c := path.Clean(p)
	switch {
	case !home && (c == "/" || c == "/*"):
		return c, true
	case home && c == "/"+symHome:
		return symHome, true
	case home && c == "/"+symHome+"/*":
		return symHome + "/*", true
	}
	return "", false
}

// judgeKill refuses a kill of every process (pid -1, however written)
// or of sandboxd ($PPID). The first argument, when an option, is the
// signal: kill -1 1234 sends SIGHUP to 1234.
func judgeKill(word string, args []arg) *Refusal {
	if len(args) > 0 && args[0].known && strings.HasPrefix(args[0].value, "-") && args[0].value != "--" {
		switch args[0].value {
		case "-l", "-L", "--list", "--table":
			return nil
		case "-s", "-n", "--signal":
			args = args[min(2, len(args)):]
		default:
			args = args[1:]
		}
	}
	if len(args) > 0 && args[0].known && args[0].value == "--" {
		args = args[1:]
	}
	for _, a := range args {
		if !a.known {
			continue
		}
		if a.value == symPPID {
			return &Refusal{Command: word, Name: "kill $PPID", Reason: "it stops sandboxd itself"}
		}
		if n, err := strconv.ParseInt(a.value, 10, 64); err == nil && n == -1 {
			return &Refusal{Command: word, Name: "kill -1", Reason: "it signals every process sandboxd's user runs, sandboxd included"}
		}
	}
	return nil
}

// sandboxdNames are how sandboxd shows in the process table: its name
// and its command line.
var sandboxdNames = []string{"sandboxd"}

// judgeKillByName refuses pkill or killall of a pattern or name that
// matches sandboxd: pkill takes an extended regular expression, killall
// an exact name unless -r.
func judgeKillByName(name, word string, args []arg) *Refusal {
	regex := name == "pkill"
	var patterns []string
	for _, a := range args {
		if !a.known {
			continue
		}
		switch v := a.value; {
		case v == "-r" || v == "--regexp":
			regex = true
		case strings.HasPrefix(v, "-"):
		default:
			patterns = append(patterns, v)
		}
	}
	for _, p := range patterns {
		for _, target := range sandboxdNames {
			hit := p == target
			if regex {
				if re, err := regexp.Compile(p); err == nil && re.MatchString(target) {
					hit = true
				}
			}
			if hit {
				return &Refusal{Command: word, Name: name + " " + p, Reason: "it stops sandboxd itself"}
			}
		}
	}
	return nil
}
