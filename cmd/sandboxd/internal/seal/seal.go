// Package seal takes sandboxd's secrets out of what other processes can
// read of it: a process may read another's /proc/PID/environ and
// cmdline, and the kernel keeps there the environment and arguments a
// process was started with, whatever the process does to its own copy.
//
// Importing the package seals. When the token or a --secret-env value is
// in the environment, or the token or its file on the command line, its
// package initialiser executes sandboxd again in the same process, with
// them taken out of both and handed over in an anonymous memory file;
// Unseal, in that second start, reads them back.
//
// It seals from a package initialiser, and imports only standard
// library packages that are initialised first anyway, so that the first
// start is the Go runtime and little more: Go initialises, of the
// packages whose imports are done, the first by import path, so a
// dependency that sorts late (path/filepath, golang.org/x/sys/unix) or
// waits for the packages that sort before it (flag, fmt, encoding/json:
// all of crypto's come first) would make this one wait for most of
// sandboxd's initialisers, which the second start runs again. Hence the
// hand-written flag walking, errors, encoding and string functions
// (strings waits for most of the standard library; bytes does not), and
// the syscall number below. internal/layers holds it to these imports
// (initFirst).
package seal

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

func init() {
	if err := sealSecrets(os.Args[1:], os.Environ(), os.Getenv); err != nil {
		_, _ = os.Stderr.WriteString("sandboxd: warning: secrets stay readable in /proc/<pid>/environ: " + err.Error() + "\n")
	}
}

// EnvSealed names the descriptor a sealed sandboxd reads its secrets
// from: set by the seal for the process it execs into, and by nothing
// else.
const EnvSealed = "SANDBOXD_SEALED_FD"

// maxSealed bounds what a sealed descriptor may hold.
const maxSealed = 1 << 20

// envToken is where the second start finds the token, whatever gave it.
const envToken = "SANDBOXD_TOKEN"

// OTLPHeaderEnv are the variables that give the OTLP exporter its
// headers, which often hold a collector's API key: sealed as a
// --secret-env value is, whether or not --secret-env names them.
var OTLPHeaderEnv = []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}

// Flags are sandboxd's flags, each with whether it takes no value (the
// flag package's own -h and -help included): flag walking (secretsOf,
// WithoutTokenFlags) needs them to tell a flag's value from the next
// flag, and a command line that is not sandboxd's (a test binary's,
// another start of the binary's) from one that is. A test in package
// main holds them to main's flag set.
var Flags = map[string]bool{
	"workspace": false, "addr": false, "metrics-addr": false, "otlp-endpoint": false,
	"token": false, "token-file": false, "allowed-origin": false, "readonly": true,
	"allow-git-writes": true, "run-as": false, "secret-env": false, "max-body": false,
	"log-level": false, "log-format": false, "shutdown-grace": false,
	"diagnostics-timeout": false, "call-budget": false, "snapshot-dir": false,
	"snapshot-max-file-size": false, "stdio": true, "exit-on-stdin-eof": true,
	"egress-socket": false, "egress-tunnel": false, "egress-listen": false, "egress-ca": false, "pids-limit": false,
	"version": true, "help": true, "h": true,
}

// given is what the command line and the environment say about secrets,
// as sandboxd's flag parsing reads them: a flag on the command line wins
// over its SANDBOXD_ variable, and --secret-env values on the command
// line replace SANDBOXD_SECRET_ENV's.
type given struct {
	token, tokenFile string
	secretEnv        []string
}

// secretsOf reads the token, the token file and the --secret-env names
// from args over getenv; ok is false when args are not a command line
// sandboxd's flag parsing takes (it then fails, and nothing is sealed).
func secretsOf(args []string, getenv func(string) string) (g given, ok bool) {
	// Trimmed, as sandboxd's flag parsing trims what a variable gives.
	g = given{token: trimSpace(getenv(envToken)), tokenFile: trimSpace(getenv("SANDBOXD_TOKEN_FILE"))}
	for _, name := range split(getenv("SANDBOXD_SECRET_ENV"), ',') {
		if name = trimSpace(name); name != "" {
			g.secretEnv = append(g.secretEnv, name)
		}
	}
	var fromArgs []string
	for i := 0; i < len(args); i++ {
		name, value, last, isFlag := flagAt(args, i)
		if !isFlag {
			if args[i] != "--" || i+1 < len(args) {
				return g, false // an argument that is not a flag
			}
			break
		}
		if _, known := Flags[name]; !known {
			return g, false
		}
		switch name {
		case "token":
			g.token = value
		case "token-file":
			g.tokenFile = value
		case "secret-env":
			fromArgs = append(fromArgs, value)
		}
		i = last
	}
	if fromArgs != nil {
		g.secretEnv = fromArgs
	}
	return g, true
}

// flagAt reads the flag at args[i] as the flag package does: -name or
// --name, then =value or, but for a flag that takes no value, the next
// argument. It returns its name, its value and the index of the last
// argument it takes; isFlag is false where the flag package stops
// (an argument that is not a flag, or --).
func flagAt(args []string, i int) (name, value string, last int, isFlag bool) {
	a := args[i]
	dashes := 0
	for dashes < len(a) && a[dashes] == '-' {
		dashes++
	}
	trimmed := a[dashes:]
	if a == "--" || dashes == 0 || dashes > 2 || trimmed == "" {
		return "", "", i, false
	}
	name, value, inline := cut(trimmed, '=')
	if inline || Flags[name] {
		return name, value, i, true
	}
	if i+1 < len(args) {
		return name, args[i+1], i + 1, true
	}
	return name, "", i, true
}

// sealSecrets seals, when there is something to seal: it returns only
// when there is not, or the exec failed (the error says so; sandboxd
// then runs unsealed).
func sealSecrets(args, environ []string, getenv func(string) string) error {
	if getenv(EnvSealed) != "" {
		return nil
	}
	g, ok := secretsOf(args, getenv)
	if !ok {
		return nil // not sandboxd's command line: run reports it
	}
	var entries []string
	var err error
	switch {
	case g.tokenFile != "" && g.token != "":
		return nil // run reports it
	case g.tokenFile != "":
		if g.token, err = ReadToken(g.tokenFile); err != nil {
			return nil // run reports it
		}
	}
	if g.token != "" {
		entries = append(entries, envToken+"="+g.token)
	}
	drop := map[string]bool{envToken: true, "SANDBOXD_TOKEN_FILE": true}
	for _, name := range append(g.secretEnv, OTLPHeaderEnv...) {
		if v := getenv(name); v != "" {
			entries = append(entries, name+"="+v)
		}
		drop[name] = true
	}
	if len(entries) == 0 {
		return nil
	}
	var data []byte
	for i, e := range entries {
		if _, _, nul := cut(e, 0); nul {
			return errors.New("seal secrets: the token holds a NUL byte")
		}
		if i > 0 {
			data = append(data, 0)
		}
		data = append(data, e...)
	}
	if len(data) > maxSealed {
		return errors.New("seal secrets: " + strconv.Itoa(len(data)) + " bytes, more than " + strconv.Itoa(maxSealed))
	}
	fd, err := memfd("sandboxd-sealed") // inherited across the exec
	if err != nil {
		return wrap("seal secrets: memfd", err)
	}
	if _, err := syscall.Write(fd, data); err != nil {
		_ = syscall.Close(fd)
		return wrap("seal secrets", err)
	}
	if _, err := syscall.Seek(fd, 0, io.SeekStart); err != nil {
		_ = syscall.Close(fd)
		return wrap("seal secrets", err)
	}
	var env []string
	for _, kv := range environ {
		if name, _, _ := cut(kv, '='); !drop[name] {
			env = append(env, kv)
		}
	}
	env = append(env, EnvSealed+"="+strconv.Itoa(fd))
	argv := append([]string{os.Args[0]}, WithoutTokenFlags(args)...)
	err = syscall.Exec("/proc/self/exe", argv, env) // #nosec G702 -- sandboxd re-executes itself with its own arguments, less the token flags
	_ = syscall.Close(fd)
	return wrap("seal secrets: exec", err)
}

// memfd makes an anonymous memory file, its descriptor left open across
// an exec.
func memfd(name string) (int, error) {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	// #nosec G103 -- memfd_create(2) takes the name's address; package syscall has no wrapper
	fd, _, errno := syscall.Syscall(sysMemfdCreate, uintptr(unsafe.Pointer(p)), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// WithoutTokenFlags is args without --token and --token-file and their
// values, in every spelling the flag package takes. A value of another
// flag is kept whatever it looks like (--workspace --token is a
// directory named --token).
func WithoutTokenFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, last, ok := flagAt(args, i)
		if !ok {
			return append(out, args[i:]...) // the flag package stops here too
		}
		if name != "token" && name != "token-file" {
			out = append(out, args[i:last+1]...)
		}
		i = last
	}
	return out
}

// ReadToken reads a token file, refusing one others can read. Its group
// may read it when that group is sandboxd's own: a Kubernetes secret
// volume with fsGroup makes the file 0440 in the pod's group, which holds
// nobody but sandboxd's user.
func ReadToken(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", wrap("--token-file", err)
	}
	if perm := info.Mode().Perm(); perm&0o037 != 0 || perm&0o040 != 0 && !ownGroup(info) {
		return "", errors.New("--token-file " + path + ": mode " + perm.String() + " lets others read it; chmod 600 it (or 640, in sandboxd's own group)")
	}
	b, err := os.ReadFile(path) // #nosec G304 -- --token-file names it: the operator's choice, its mode checked above
	if err != nil {
		return "", wrap("--token-file", err)
	}
	token := string(bytes.TrimSpace(b))
	if token == "" {
		return "", errors.New("--token-file " + path + ": empty")
	}
	return token, nil
}

// wrapped is an error with what failed before it: fmt.Errorf's %w,
// without package fmt (see the package comment).
type wrapped struct {
	what string
	err  error
}

func wrap(what string, err error) error { return &wrapped{what, err} }
func (e *wrapped) Error() string        { return e.what + ": " + e.err.Error() }
func (e *wrapped) Unwrap() error        { return e.err }

// ownGroup reports whether the file's group is sandboxd's effective one.
func ownGroup(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Gid) == os.Getegid()
}

// Unseal reads what the seal handed over, if anything, and returns a
// getenv that serves it: the token as SANDBOXD_TOKEN, each secret under
// its own name.
func Unseal(getenv func(string) string) (func(string) string, error) {
	v := getenv(EnvSealed)
	if v == "" {
		return getenv, nil
	}
	os.Unsetenv(EnvSealed) // the shells must not see it
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, errors.New(EnvSealed + "=" + strconv.Quote(v) + ": not a descriptor sandboxd sealed")
	}
	f := os.NewFile(uintptr(fd), "sealed secrets")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSealed+1))
	if err == nil && len(data) > maxSealed {
		err = errors.New("too large")
	}
	if err != nil {
		return nil, wrap("read the sealed secrets", err)
	}
	sealed := map[string]string{}
	for _, kv := range split(string(data), 0) {
		name, value, ok := cut(kv, '=')
		if !ok || name == "" {
			return nil, errors.New("read the sealed secrets: not what the seal writes")
		}
		sealed[name] = value
	}
	return func(name string) string {
		if v, ok := sealed[name]; ok {
			return v
		}
		return getenv(name)
	}, nil
}

// cut is strings.Cut with a one-byte separator (see the package comment
// for why not strings).
func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// split is strings.Split with a one-byte separator.
func split(s string, sep byte) []string {
	var out []string
	for {
		before, after, found := cut(s, sep)
		out = append(out, before)
		if !found {
			return out
		}
		s = after
	}
}

// trimSpace is strings.TrimSpace.
func trimSpace(s string) string { return string(bytes.TrimSpace([]byte(s))) }
