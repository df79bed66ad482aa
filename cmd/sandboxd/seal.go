package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// envSealed names the descriptor a sealed sandboxd reads its secrets
// from: set by sealSecrets for the process it execs into, and by nothing
// else.
const envSealed = "SANDBOXD_SEALED_FD"

// maxSealed bounds what a sealed descriptor may hold.
const maxSealed = 1 << 20

// sealedSecrets is what crosses the exec: the token and the values of the
// --secret-env variables.
type sealedSecrets struct {
	Token   string            `json:"token,omitempty"`
	Secrets map[string]string `json:"secrets,omitempty"`
}

// sealSecrets makes sure no secret of sandboxd's can be read from its
// process: a process may read another's /proc/PID/environ and cmdline,
// and the kernel keeps the environment a process was started with there
// whatever the process does to its own copy. When the token or a
// --secret-env value is in the environment, or the token or its file on
// the command line, it execs sandboxd again in the same process, with
// them taken out of both and handed over in an anonymous memory file
// instead. It returns only when there is nothing to seal, or the exec
// failed (the error says so; sandboxd then runs unsealed).
func sealSecrets(args, environ []string, getenv func(string) string) error {
	if getenv(envSealed) != "" {
		return nil
	}
	o, err := parseOptions(args, getenv, io.Discard)
	if err != nil {
		return nil // run reports it
	}
	var s sealedSecrets
	switch {
	case o.tokenFile != "" && o.token != "":
		return nil // run reports it
	case o.tokenFile != "":
		if s.Token, err = readToken(o.tokenFile); err != nil {
			return nil
		}
	default:
		s.Token = o.token
	}
	drop := map[string]bool{"SANDBOXD_TOKEN": true, "SANDBOXD_TOKEN_FILE": true}
	for _, name := range o.secretEnv {
		if v := getenv(name); v != "" {
			if s.Secrets == nil {
				s.Secrets = map[string]string{}
			}
			s.Secrets[name] = v
		}
		drop[name] = true
	}
	if s.Token == "" && len(s.Secrets) == 0 {
		return nil
	}
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("seal secrets: %w", err)
	}
	fd, err := unix.MemfdCreate("sandboxd-sealed", 0) // inherited across the exec
	if err != nil {
		return fmt.Errorf("seal secrets: memfd: %w", err)
	}
	if _, err := unix.Write(fd, data); err != nil {
		_ = unix.Close(fd)
		return fmt.Errorf("seal secrets: %w", err)
	}
	if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
		_ = unix.Close(fd)
		return fmt.Errorf("seal secrets: %w", err)
	}
	var env []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !drop[name] {
			env = append(env, kv)
		}
	}
	env = append(env, envSealed+"="+strconv.Itoa(fd))
	argv := append([]string{os.Args[0]}, withoutTokenFlags(args)...)
	err = syscall.Exec("/proc/self/exe", argv, env) // #nosec G702 -- sandboxd re-executes itself with its own arguments, less the token flags
	_ = unix.Close(fd)
	return fmt.Errorf("seal secrets: exec: %w", err)
}

// withoutTokenFlags is args without --token and --token-file and their
// values, in every spelling the flag package takes. A value of another
// flag is kept whatever it looks like (--workspace --token is a
// directory named --token).
func withoutTokenFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if a == "--" || !strings.HasPrefix(a, "-") || len(a)-len(name) > 2 || name == "" {
			return append(out, args[i:]...) // the flag package stops here too
		}
		flagName, _, inline := strings.Cut(name, "=")
		takesValue := !inline && !boolFlags[flagName]
		if flagName == "token" || flagName == "token-file" {
			if takesValue {
				i++
			}
			continue
		}
		out = append(out, a)
		if takesValue && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// boolFlags are sandboxd's flags that take no value.
var boolFlags = map[string]bool{"readonly": true, "allow-git-writes": true, "stdio": true, "version": true, "help": true, "h": true}

// unsealSecrets reads what sealSecrets handed over, if anything, and
// returns a getenv that serves it: the token as SANDBOXD_TOKEN, each
// secret under its own name.
func unsealSecrets(getenv func(string) string) (func(string) string, error) {
	v := getenv(envSealed)
	if v == "" {
		return getenv, nil
	}
	os.Unsetenv(envSealed) // the shells must not see it
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not a descriptor sandboxd sealed", envSealed, v)
	}
	f := os.NewFile(uintptr(fd), "sealed secrets")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSealed+1))
	if err == nil && len(data) > maxSealed {
		err = errors.New("too large")
	}
	if err != nil {
		return nil, fmt.Errorf("read the sealed secrets: %w", err)
	}
	var s sealedSecrets
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read the sealed secrets: %w", err)
	}
	return func(name string) string {
		if name == "SANDBOXD_TOKEN" && s.Token != "" {
			return s.Token
		}
		if v, ok := s.Secrets[name]; ok {
			return v
		}
		return getenv(name)
	}, nil
}
