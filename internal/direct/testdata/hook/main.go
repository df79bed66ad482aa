// Command hook is the smallest honest exec hook: it reads its whole request
// from stdin and answers with a verdict line. The benchmarks spawn it to
// measure what a sandbox adds to a bare fork/exec.
package main

import (
	"io"
	"os"
)

func main() {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		os.Exit(1)
	}
	if _, err := os.Stdout.WriteString(`{"allow":true}` + "\n"); err != nil {
		os.Exit(1)
	}
}
