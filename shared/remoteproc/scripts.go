package remoteproc

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Prefix starts every control line the wrapper writes to stderr.
const Prefix = "\x1epks:"

// wrapperScript runs as /bin/sh -c wrapperScript COMMAND ARGS..., so $0
// is the command. The PID it reports is the wrapper's own: the exec'd
// process leads its session, so the kill script finds the command and
// its children through it even after the command has exited. The
// environment arrives as KEY=value lines, values escaped for printf %b
// (the x keeps trailing newlines from the command substitution); an empty
// line ends it and starts the call. End of file before that line means
// the call was abandoned: the wrapper exits without running anything.
// The command is checked after the environment is set, so a PATH the
// call sets is the one searched.
const wrapperScript = `printf '\036pks:%s\n' "$$" >&2
while IFS= read -r kv || exit 0; [ -n "$kv" ]; do v=$(printf '%bx' "${kv#*=}"); export "${kv%%=*}=${v%x}"; done
case $0 in */*) [ -f "$0" ] && [ -x "$0" ];; *) command -v "$0" >/dev/null 2>&1;; esac ||` +
	` { printf '\036pks:notfound\n' >&2; exit 127; }
"$0" "$@"; c=$?; printf '\036pks:exit:%s\n' "$c" >&2; exit "$c"`

// KillScript freezes every process of the call and then kills them all.
// The call's processes are those in the session of $1 (the wrapper's PID,
// found even after the wrapper has exited), plus any descendant of $1
// that started a session of its own (found by walking parent PIDs until
// no new process appears, freezing each with SIGSTOP so nothing forks
// past the walk). It needs only /bin/sh with its kill builtin and /proc.
const KillScript = `root=$1; kill -STOP "$root" 2>/dev/null; found=" $root "; changed=1
while [ "$changed" = 1 ]; do changed=0
for st in /proc/[0-9]*/stat; do pid=${st#/proc/}; pid=${pid%/stat}
case "$found" in *" $pid "*) continue;; esac
read -r line < "$st" 2>/dev/null || continue
set -- ${line##*\) }
case "$found" in *" $2 "*) hit=1;; *) hit=0;; esac
[ "$4" = "$root" ] && hit=1
if [ "$hit" = 1 ]; then kill -STOP "$pid" 2>/dev/null; found="$found$pid "; changed=1; fi
done; done
kill -KILL $found 2>/dev/null; exit 0`

// checkScript succeeds where the wrapper and the kill script can run.
const checkScript = "command -v kill >/dev/null && test -r /proc/self/stat"

// Argv is the remote command line that runs command with args under the
// wrapper.
func Argv(command string, args []string) []string {
	return append([]string{"/bin/sh", "-c", wrapperScript, command}, args...)
}

// KillArgv is the remote command line that kills the process tree of the
// wrapper whose PID is pid.
func KillArgv(pid int) []string {
	return []string{"/bin/sh", "-c", KillScript, "pks-kill", strconv.Itoa(pid)}
}

// CheckArgv is the remote command line that exits 0 when the target can
// run the wrapper and the kill script.
func CheckArgv() []string { return []string{"/bin/sh", "-c", checkScript} }

// Requirement says, for error messages, what a target must have.
const Requirement = "/bin/sh with the kill builtin and a mounted /proc (commands run under /bin/sh so that a timeout " +
	"can kill them and their children remotely; an exec stream cannot signal a process)"

// Preamble is what the caller writes to the wrapper's stdin before the
// call's own stdin: the environment, then the go line. Every entry must
// be KEY=value with KEY a shell identifier (the wrapper exports it).
func Preamble(env []string) ([]byte, error) {
	var b bytes.Buffer
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("env entry %q: want KEY=value", kv)
		}
		if !isName(k) {
			return nil, fmt.Errorf("env variable %q: the name must be a shell identifier (letters, digits, _; not starting with a digit): the remote shell exports it", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return nil, fmt.Errorf("env variable %q: the value holds a NUL byte", k)
		}
		b.WriteString(k)
		b.WriteByte('=')
		for i := 0; i < len(v); i++ {
			switch c := v[i]; c {
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
