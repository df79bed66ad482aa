// Command exitcode exits with the status given as argv[1].
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: exitcode CODE")
		os.Exit(2)
	}
	code, err := strconv.Atoi(os.Args[1])
	if err != nil || code < 0 || code > 255 {
		fmt.Fprintf(os.Stderr, "exitcode: %q is not an exit status (0-255)\n", os.Args[1])
		os.Exit(2)
	}
	os.Exit(code)
}
