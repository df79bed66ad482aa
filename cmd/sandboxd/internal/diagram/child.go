package diagram

import (
	"context"
	"fmt"
	"io"
	"os"
)

// childEnv, set to childD2, makes this executable a D2 renderer (see
// ServeChild).
const (
	childEnv = "SANDBOXD_DIAGRAM_CHILD"
	childD2  = "d2"
)

// ServeChild makes the process a D2 renderer when its parent started it
// as one: it reads the source from stdin, writes the SVG to stdout, and
// exits (1, the error on stderr, if the source does not render). Any
// other process returns at once. sandboxd's main, and the TestMain of a
// package whose tests render D2, call it first.
func ServeChild() {
	if os.Getenv(childEnv) != childD2 {
		return
	}
	os.Exit(serveD2(os.Stdin, os.Stdout, os.Stderr))
}

func serveD2(stdin io.Reader, stdout, stderr io.Writer) int {
	// The parent has checked the size; this only stops a runaway pipe.
	source, err := io.ReadAll(io.LimitReader(stdin, int64(DefaultLimits.Source)+1))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	svg, err := d2SVG(context.Background(), string(source))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if _, err := stdout.Write(svg); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
