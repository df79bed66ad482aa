// Package d2render is the D2 half of render_diagram, linked only into
// the sandboxd-diagram helper (and tests), never into sandboxd: D2, the
// chroma highlighting and goldmark it renders with, its fonts and its
// JavaScript interpreter cost every process that links them tens of
// milliseconds of package initialisers at start. sandboxd runs the
// helper per D2 render as a limited child (package child), its job on
// stdin (a diagram.D2Job) and the SVG on stdout; see package diagram for
// the limits and what a source may not reach.
package d2render
