// Command sandboxd-diagram renders D2 for sandboxd's render_diagram, one
// diagram per start: sandboxd runs it as a limited child (package child)
// with the job on stdin and reads the SVG from stdout. It is a binary of
// its own, installed next to sandboxd, so that sandboxd's start does not
// pay for D2's package initialisers (see package d2render); run by hand
// it only says what it is.
package main

import (
	"fmt"
	"os"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/child"
	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/diagram/d2render"
)

func main() {
	d2render.Register()
	child.Serve() // exits when sandboxd started this process
	fmt.Fprintln(os.Stderr, "sandboxd-diagram renders D2 for sandboxd's render_diagram; sandboxd runs it, not a person")
	os.Exit(2)
}
