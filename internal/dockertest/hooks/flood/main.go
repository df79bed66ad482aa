// Command flood writes argv[1] bytes to stdout and then, if given, argv[2]
// bytes to stderr, for testing output caps and stream separation.
//
// Stdout repeats "0123456789abcdef" and stderr repeats "FEDCBA9876543210",
// so a test can tell the streams apart and check no byte was lost or
// reordered; dockertest.FloodStdout and FloodStderr produce the same bytes.
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
)

const (
	stdoutPattern = "0123456789abcdef"
	stderrPattern = "FEDCBA9876543210"
)

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: flood STDOUT_BYTES [STDERR_BYTES]")
		os.Exit(2)
	}
	counts := make([]int64, 0, 2)
	for _, arg := range os.Args[1:] {
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "flood: %q is not a byte count\n", arg)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	if err := write(os.Stdout, stdoutPattern, counts[0]); err != nil {
		os.Exit(1) // stdout is gone; nobody to tell
	}
	if len(counts) == 2 {
		if err := write(os.Stderr, stderrPattern, counts[1]); err != nil {
			os.Exit(1)
		}
	}
}

// write sends n bytes of the repeated pattern in large chunks: floods are
// meant to be big, and one write per byte would make them slow.
func write(w io.Writer, pattern string, n int64) error {
	chunk := make([]byte, 64<<10) // a multiple of len(pattern): chunks join seamlessly
	for i := range chunk {
		chunk[i] = pattern[i%len(pattern)]
	}
	for n > 0 {
		c := chunk[:min(n, int64(len(chunk)))]
		if _, err := w.Write(c); err != nil {
			return err
		}
		n -= int64(len(c))
	}
	return nil
}
