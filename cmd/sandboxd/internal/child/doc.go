// Package child runs work where a runaway cannot take sandboxd down: in
// a child process killed with its process group at a time limit, its
// address space capped (and first in line for the kernel's OOM killer),
// its output capped. It runs other programs (Graphviz's dot) and
// sandboxd's own executable as a worker for one function registered
// under a name (D2's renderer, the structural Go edits): parsing,
// formatting and laying out an agent's input can cost memory and time
// out of all proportion to its size, and a goroutine can be neither
// stopped nor limited, only a process.
//
// A child of sandboxd's own executable, or of a helper built with this
// package (sandboxd-diagram, which alone links D2), is told its function
// by SANDBOXD_CHILD in its environment: main, and the TestMain of a
// package whose tests start children, calls Serve first, which runs the
// function and exits.
package child
