package main

import "flag"

// parseInterspersed parses args as parseFlags does, but lets flags come
// after positional arguments too ("codegen down ID --socket PATH", the
// order the docs show): the standard flag package stops at the first
// non-flag. Everything after "--" is positional. It returns the
// positional arguments in order.
func parseInterspersed(fs *flag.FlagSet, args []string) (positional []string, ok bool, code int) {
	for {
		if ok, code := parseFlags(fs, args); !ok {
			return nil, false, code
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, true, exitOK
		}
		// Parse consumes a "--" and stops: what follows is all positional.
		if stop := len(args) - len(rest); stop > 0 && args[stop-1] == "--" {
			return append(positional, rest...), true, exitOK
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
