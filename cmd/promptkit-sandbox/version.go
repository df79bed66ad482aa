package main

import (
	"fmt"
	"runtime"
)

func (e *cliEnv) version(args []string) int {
	var common commonFlags
	fs := newFlagSet("version", e.stderr, &common)
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	fmt.Fprintf(e.stdout, "promptkit-sandbox %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
