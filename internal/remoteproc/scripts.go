package remoteproc

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/internal/resident"
)

// Prefix starts every control line the wrapper writes to stderr.
const Prefix = "\x1epks:"

// wrapperScript runs as /bin/sh -c wrapperScript pks-wrapper. It takes
// everything about the call from stdin, so one wrapper, started ahead of
// its call, can serve any call, and nothing of the call (arguments,
// environment) appears in the exec request, where the API server's audit
// log would keep it. Each line is a:ARG (the command, then its
// arguments) or e:KEY=value, escaped for printf %b when it holds a
// backslash or a newline (the x keeps trailing newlines from the command
// substitution); an empty line ends them and starts the call. End of file
// before that line means the call was abandoned: the wrapper exits
// without running anything. The PID it reports is its own: the exec'd
// process leads its session, so the kill script finds the command and its
// children through it even after the command has exited. The command is
// checked after the environment is set, so a PATH the call sets is the
// one searched. The run line says the command is about to start: a stream
// that ends without it never ran the call, which can then be tried again.
// Once the command is over, the wrapper reads what is left of its stdin
// (__pks_drain) before it exits: a runtime that ends the exec while the
// client is still sending the call's stdin closes a connection with data
// coming in, the client's end is reset, and the command's last output,
// control lines and all, is lost on the way (seen with a 256 KiB stdin
// the hook never read, through kubectl). cat is looked up on a PATH of
// the wrapper's own, not the call's; without one the shell reads.
//
// Every process of the call carries the call's mark (CallEnv=pks-PID-,
// PID the wrapper's): a daemon that double-forked out of the call's
// session and tree is still found by it, as the resident finds its
// calls' orphans. When the command is over, the wrapper sweeps: it
// freezes every process whose environment holds the mark, until a pass
// finds no new one, and kills them all, before it reports the exit (so
// a call that returned left nothing behind). The sweep needs grep, which
// every image with a shell of busybox or coreutils has; without it there
// is no sweep. grep runs with the mark emptied, so it never finds
// itself.
const wrapperScript = `printf '\036pks:%s\n' "$$" >&2; set --
__pks_drain() { PATH=/usr/bin:/bin cat >/dev/null 2>&1 || while IFS= read -r __pks_l; do :; done; }
` + sweepFunc + `
while IFS= read -r __pks_l || exit 0; [ -n "$__pks_l" ]; do
case $__pks_l in *\\*) __pks_v=$(printf '%bx' "${__pks_l#??}"); __pks_v=${__pks_v%x};; *) __pks_v=${__pks_l#??};; esac
case $__pks_l in a:*) set -- "$@" "$__pks_v";; e:*) export "$__pks_v";; esac; done
[ $# -gt 0 ] || exit 0; __pks_c=$1; shift
case $__pks_c in */*) [ -f "$__pks_c" ] && [ -x "$__pks_c" ];; *) command -v "$__pks_c" >/dev/null 2>&1;; esac ||` +
	` { printf '\036pks:notfound\n' >&2; __pks_drain; exit 127; }
export ` + CallEnv + `=pks-$$-; printf '\036pks:run\n' >&2; "$__pks_c" "$@"; __pks_c=$?
__pks_sweep pks-$$-; printf '\036pks:exit:%s\n' "$__pks_c" >&2; __pks_drain; exit "$__pks_c"`

// CallEnv names the variable that marks every process of a call (see
// wrapperScript): the one the resident marks its calls' processes with.
const CallEnv = resident.CallEnv

// sweepFunc defines __pks_sweep MARK: freeze every process whose
// environment holds CallEnv=MARK, pass after pass until none is new,
// then kill them all. The kill script runs it too.
const sweepFunc = `__pks_sweep() { __pks_f=" "; __pks_n=1; while [ -n "$__pks_n" ]; do __pks_n=
for __pks_p in $(PATH=/usr/bin:/bin ` + CallEnv + `= grep -slzxF "` + CallEnv + `=$1" /proc/[0-9]*/environ 2>/dev/null); do
__pks_p=${__pks_p#/proc/}; __pks_p=${__pks_p%/environ}; case "$__pks_f" in *" $__pks_p "*) continue;; esac
kill -STOP "$__pks_p" 2>/dev/null; __pks_f="$__pks_f$__pks_p "; __pks_n=1; done; done
[ "$__pks_f" = " " ] || kill -KILL $__pks_f 2>/dev/null; }`

// KillScript freezes every process of the call and then kills them all.
// The call's processes are those in the session of $1 (the wrapper's PID,
// found even after the wrapper has exited), plus any descendant of $1
// that started a session of its own (found by walking parent PIDs until
// no new process appears, freezing each with SIGSTOP so nothing forks
// past the walk), plus every process that carries the call's mark (see
// wrapperScript), wherever it went. It needs only /bin/sh with its kill
// builtin and /proc (and grep for the marked ones).
const KillScript = sweepFunc + `
root=$1; kill -STOP "$root" 2>/dev/null; found=" $root "; changed=1
while [ "$changed" = 1 ]; do changed=0
for st in /proc/[0-9]*/stat; do pid=${st#/proc/}; pid=${pid%/stat}
case "$found" in *" $pid "*) continue;; esac
read -r line < "$st" 2>/dev/null || continue
set -- ${line##*\) }
case "$found" in *" $2 "*) hit=1;; *) hit=0;; esac
[ "$4" = "$root" ] && hit=1
if [ "$hit" = 1 ]; then kill -STOP "$pid" 2>/dev/null; found="$found$pid "; changed=1; fi
done; done
kill -KILL $found 2>/dev/null; __pks_sweep "pks-$root-"; exit 0`

// checkScript succeeds where the wrapper and the kill script can run.
const checkScript = "command -v kill >/dev/null && test -r /proc/self/stat"

// Argv is the remote command line of the wrapper; Preamble gives it the
// call.
func Argv() []string { return []string{"/bin/sh", "-c", wrapperScript, "pks-wrapper"} }

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
// call's own stdin: the command, its arguments and its environment, then
// the go line. Every env entry must be KEY=value with KEY a shell
// identifier (the wrapper exports it).
func Preamble(command string, args, env []string) ([]byte, error) {
	var b bytes.Buffer
	line := func(kind byte, v string) {
		b.WriteByte(kind)
		b.WriteByte(':')
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
	for _, v := range append([]string{command}, args...) {
		if strings.IndexByte(v, 0) >= 0 {
			return nil, fmt.Errorf("argument %q holds a NUL byte", v)
		}
		line('a', v)
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("env entry %q: want KEY=value", kv)
		}
		if err := CheckEnvName(k); err != nil {
			return nil, fmt.Errorf("env %w", err)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return nil, fmt.Errorf("env variable %q: the value holds a NUL byte", k)
		}
		line('e', kv)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// CheckEnvName says whether name can be a variable of a call: the
// wrapper exports it, so it must be a shell identifier.
func CheckEnvName(name string) error {
	if !isName(name) {
		return fmt.Errorf("variable %q: the name must be a shell identifier (letters, digits, _; not starting with a digit): the remote shell exports it", name)
	}
	return nil
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
