// Command echo copies its stdin to its stdout: the smallest hook there is,
// for proving that stdin reaches the process and stdout comes back intact.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}
