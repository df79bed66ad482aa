package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
)

// GrepRequest is one content search.
type GrepRequest struct {
	Pattern                string // rg regex
	Path                   string // file or dir; "" = workspace root
	Glob                   string // e.g. "*.go", "*.{ts,tsx}", "cmd/**/*.go"; a leading '!' excludes
	Type                   string // rg --type, e.g. "go"
	OutputMode             string // "content" | "files_with_matches" (default) | "count"
	IgnoreCase             bool   // -i
	LineNumbers            bool   // -n (content mode); the server passes true by default
	Before, After, Context int    // -B -A -C (content mode)
	Multiline              bool   // rg -U --multiline-dotall
	HeadLimit              int    // first N lines/entries of the output; 0 = no limit
}

// maxColumns is the longest line, in bytes, Grep shows whole: a longer
// one shows its first maxColumns bytes and then omittedEnd, as rg's
// --max-columns-preview prints it.
const maxColumns = 2000

// omittedEnd marks a line shown cut, by rg or by the reader of its output.
const omittedEnd = " [... omitted end of long line]"

const (
	modeContent = "content"
	modeFiles   = "files_with_matches"
	modeCount   = "count"
)

// Grep searches file contents with ripgrep. Every result line starts with
// an absolute path; files git would ignore are not searched, whatever the
// Glob says.
func (s *Searcher) Grep(ctx context.Context, req GrepRequest) (string, error) {
	out, err := s.grep(ctx, req)
	if err != nil {
		return "", fmt.Errorf("grep: %w", err)
	}
	return out, nil
}

func (s *Searcher) grep(ctx context.Context, req GrepRequest) (string, error) {
	p, err := s.planGrep(req)
	if err != nil {
		return "", err
	}
	run, err := s.start(ctx, p.args)
	if err != nil {
		return "", err
	}
	c := collector{max: s.maxOutput, head: req.HeadLimit, vet: s.vetter, scrub: s.scrub, onRedact: s.onRedact}
	if !c.read(run.out, p) {
		run.halt()
	}
	warnings, err := run.wait(c.sawOutput)
	if err != nil {
		return "", err
	}
	return c.result(p.mode, warnings), nil
}

// RipgrepCommand is the command line Grep runs for req, rg's path first:
// for logs, and for benchmarks that time rg alone on the same work.
func (s *Searcher) RipgrepCommand(req GrepRequest) ([]string, error) {
	p, err := s.planGrep(req)
	if err != nil {
		return nil, err
	}
	return append([]string{s.rg}, p.args...), nil
}

// grepPlan is an rg command line and how to read what it prints.
type grepPlan struct {
	args          []string
	mode          string
	filter        *pathFilter // nil: no glob filter
	lineNumbers   bool
	multiline     bool
	before, after int // context lines, content mode
}

func (s *Searcher) planGrep(req GrepRequest) (grepPlan, error) {
	p := grepPlan{mode: req.OutputMode, lineNumbers: req.LineNumbers, multiline: req.Multiline}
	if p.mode == "" {
		p.mode = modeFiles
	}
	if p.mode != modeContent && p.mode != modeFiles && p.mode != modeCount {
		return p, fmt.Errorf("invalid output_mode %q: use %q, %q or %q", req.OutputMode, modeContent, modeFiles, modeCount)
	}
	if req.Pattern == "" {
		return p, errors.New("empty pattern")
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"-A", req.After}, {"-B", req.Before}, {"-C", req.Context}, {"head_limit", req.HeadLimit}} {
		if c.n < 0 {
			return p, fmt.Errorf("%s must not be negative, got %d", c.name, c.n)
		}
	}
	t, err := s.resolve(req.Path)
	if err != nil {
		return p, err
	}

	// NUL after each path, so paths are read back unambiguously and each
	// line can be vetted against its file. rg searches the bytes as they
	// are (no transcoding of UTF-16), which is what the scrubber reads.
	args := append(slices.Clip(baseArgs), "--color=never", "--with-filename", "--no-heading", "--null", "--encoding=none")
	if req.Type != "" {
		args = append(args, "--type="+req.Type)
	}
	if req.Glob != "" {
		g, err := parseGlobFilter(req.Glob)
		if err != nil {
			return p, err
		}
		switch {
		case g.fileName() && nameGlob(g.name) && (g.negate || req.Type == ""):
			// Exactly a file type, checked after the ignore rules; an
			// exclusion combines with a --type, an inclusion would add to it.
			not := ""
			if g.negate {
				not = "-not"
			}
			args = append(args, "--type-add="+typeName+":"+g.name, "--type"+not+"="+typeName)
		default:
			p.filter = g.filter(s.ws.Dir(), t)
			if seg, ok := lastSegment(g.path); ok && !g.negate && req.Type == "" {
				args = append(args, "--type-add="+typeName+":"+seg, "--type="+typeName)
			}
		}
	}

	if p.mode == modeContent {
		p.before, p.after = req.Before, req.After
		if req.Context > 0 {
			p.before, p.after = req.Context, req.Context
		}
	}
	switch {
	case p.multiline && p.mode == modeFiles:
		args = append(args, "--files-with-matches")
	case p.multiline && p.mode == modeCount:
		args = append(args, "--count")
	case p.mode == modeContent:
		// rg holds a long line whole, but prints only its start, so what
		// is read back here stays small whatever the files hold. Line
		// numbers say which line to vet, and whether it matched (':') or
		// is context ('-').
		args = append(args, "--max-columns="+strconv.Itoa(maxColumns), "--max-columns-preview", "--line-number")
		for _, c := range []struct {
			flag string
			n    int
		}{{"--after-context=", p.after}, {"--before-context=", p.before}} {
			if c.n > 0 {
				args = append(args, c.flag+strconv.Itoa(c.n))
			}
		}
	default:
		// files_with_matches and count without multiline: the matching
		// lines, by number, to be vetted and counted here; their text is
		// not needed (rg prints an omission note for it).
		args = append(args, "--line-number", "--max-columns=1")
	}
	if req.IgnoreCase {
		args = append(args, "--ignore-case")
	}
	if req.Multiline {
		args = append(args, "--multiline", "--multiline-dotall")
	}
	p.args = append(args, "--", req.Pattern, t.abs)
	return p, nil
}

// collector builds a Grep result from rg's output as it streams, and says
// when it has enough. Every record rg prints names its file (--null), so
// the lines that hold a secret can be left out (see vet.go).
type collector struct {
	buf       []byte
	scratch   []byte
	cutLine   []byte // a record cut at maxRecord, with omittedEnd
	max       int
	head      int
	lines     int
	sawOutput bool
	cutHead   bool
	cutBytes  bool
	pendSep   bool // a "--" between context groups, held until a kept line follows it

	vet      func(path string) *lineVetter // nil: nothing is vetted (tests of the reader alone)
	scrub    *scrub.Scrubber               // scrubs each line of content on its own; nil: not here
	onRedact func(int)                     // told how many redactions scrubbed made; nil: nobody
	file     fileState
}

// fileState is what the collector holds of the file whose lines rg is
// printing.
type fileState struct {
	path     string
	kept     bool // the glob filter keeps it
	vetter   *lineVetter
	dirty    int // multiline: 0 unknown, 1 clean, 2 holds a secret
	matches  int
	printed  int // line last shown, 0 none
	afterTo  int // lines up to this one show as context
	held     []heldLine
	heldSize int
}

type heldLine struct {
	n    int
	text []byte
}

// read consumes rg's output; false means the result is full and rg can be
// stopped.
func (c *collector) read(r *bufio.Reader, p grepPlan) bool {
	defer c.closeFile()
	delim := byte('\n')
	if p.multiline && p.mode == modeFiles {
		delim = 0
	}
	var long []byte
	for {
		rec, cut, err := readRecord(r, delim, maxRecord, &long)
		if cut {
			c.cutLine = append(append(c.cutLine[:0], rec...), omittedEnd...)
			rec = c.cutLine
		}
		if len(rec) > 0 || err == nil {
			c.sawOutput = true
			if !c.take(rec, p) {
				return false
			}
		}
		if err != nil {
			return c.endFile(p)
		}
	}
}

// take handles one record from rg.
func (c *collector) take(rec []byte, p grepPlan) bool {
	if c.vet == nil && p.filter == nil && !p.multiline {
		return c.add(rec)
	}
	if p.multiline && p.mode == modeFiles {
		if !c.enter(rec, p) {
			return true
		}
		return c.add(rec)
	}
	i := bytes.IndexByte(rec, 0)
	if i < 0 {
		if string(rec) == "--" && p.multiline {
			c.pendSep = c.lines > 0
		}
		// rg's own separators are recomputed from the lines kept; a
		// notice such as "binary file matches" names no line, so what it
		// says cannot be vetted.
		return true
	}
	path, rest := rec[:i], rec[i+1:]
	if string(path) != c.file.path && !c.endFile(p) {
		return false
	}
	if !c.enter(path, p) {
		return true
	}
	if p.multiline {
		return c.takeMultiline(path, rest, p)
	}
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 || j == len(rest) || rest[j] != ':' && rest[j] != '-' {
		return true // not a line rg numbered; nothing to vet it by
	}
	n, err := strconv.Atoi(string(rest[:j]))
	if err != nil {
		return true
	}
	match := rest[j] == ':' && (c.file.vetter == nil || !c.file.vetter.secret(n))
	switch p.mode {
	case modeFiles:
		if match && c.file.matches == 0 {
			c.file.matches++
			return c.add(path)
		}
		return true
	case modeCount:
		if match {
			c.file.matches++
		}
		return true
	}
	return c.contentLine(path, n, rest[j+1:], match, p)
}

// enter starts on path's records, closing the previous file, and says
// whether they are kept: the glob filter must keep the path, and with
// multiline the file must hold no secret.
func (c *collector) enter(path []byte, p grepPlan) bool {
	if string(path) == c.file.path && c.file.path != "" {
		return c.file.kept && c.file.dirty != 2
	}
	c.closeFile()
	c.file = fileState{path: string(path), held: c.file.held[:0]}
	c.file.kept = p.filter == nil || p.filter.keep(path)
	if !c.file.kept || c.vet == nil {
		return c.file.kept
	}
	c.file.vetter = c.vet(c.file.path)
	if p.multiline {
		c.file.dirty = 1
		if c.file.vetter.any() {
			c.file.dirty = 2
			return false
		}
	}
	return true
}

func (c *collector) closeFile() {
	if v := c.file.vetter; v != nil {
		if cl, ok := v.r.(io.Closer); ok {
			_ = cl.Close()
		}
		c.file.vetter = nil
	}
}

// endFile finishes the current file: its count, in count mode.
func (c *collector) endFile(p grepPlan) bool {
	f := &c.file
	if f.path == "" || p.multiline || p.mode != modeCount || f.matches == 0 {
		return true
	}
	n := f.matches
	f.matches = 0
	c.scratch = append(append(append(c.scratch[:0], f.path...), ':'), strconv.Itoa(n)...)
	return c.add(c.scratch)
}

// takeMultiline passes on a record of a kept file as rg printed it.
func (c *collector) takeMultiline(path, rest []byte, p grepPlan) bool {
	if c.pendSep {
		c.pendSep = false
		if !c.add([]byte("--")) {
			return false
		}
	}
	sep, num := byte(':'), 0
	if p.mode == modeContent {
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 0 && j < len(rest) && (rest[j] == ':' || rest[j] == '-') {
			sep, num = rest[j], j+1
		}
	}
	c.scratch = append(append(c.scratch[:0], path...), sep)
	if p.lineNumbers {
		c.scratch = append(c.scratch, rest[:num]...)
	}
	if p.mode == modeContent {
		c.scratch = append(c.scratch, c.scrubbed(rest[num:])...)
	} else {
		c.scratch = append(c.scratch, rest[num:]...)
	}
	return c.add(c.scratch)
}

// contentLine places one line of content mode: a match is shown with the
// lines before it that are held, a line after a match as context, and
// any other line is held in case a match follows. rg printed every line
// within the context of its matches, and the matches kept are some of
// those, so every line needed is among rg's.
func (c *collector) contentLine(path []byte, n int, text []byte, match bool, p grepPlan) bool {
	f := &c.file
	if match {
		for _, h := range f.held {
			if h.n >= n-p.before && h.n > f.printed {
				if !c.show(path, h.n, '-', h.text, p) {
					return false
				}
			}
		}
		f.held, f.heldSize = f.held[:0], 0
		f.afterTo = n + p.after
		return c.show(path, n, ':', text, p)
	}
	if n <= f.afterTo {
		return c.show(path, n, '-', text, p)
	}
	if p.before > 0 {
		if len(f.held) > 0 && (len(f.held) == p.before || f.heldSize+len(text) > c.max) {
			f.heldSize -= len(f.held[0].text)
			f.held = append(f.held[:0], f.held[1:]...)
		}
		f.held = append(f.held, heldLine{n, append([]byte(nil), text...)})
		f.heldSize += len(text)
	}
	return true
}

// show adds one line of content, with a "--" before it when it does not
// follow the line shown last, as rg separates context groups.
func (c *collector) show(path []byte, n int, sep byte, text []byte, p grepPlan) bool {
	f := &c.file
	if (p.before > 0 || p.after > 0) && c.lines > 0 && (f.printed == 0 || n != f.printed+1) {
		if !c.add([]byte("--")) {
			return false
		}
	}
	f.printed = n
	c.scratch = append(append(c.scratch[:0], path...), sep)
	if p.lineNumbers {
		c.scratch = append(strconv.AppendInt(c.scratch, int64(n), 10), sep)
	}
	c.scratch = append(c.scratch, c.scrubbed(text)...)
	return c.add(c.scratch)
}

// scrubbed is a line of content scrubbed by itself. The whole result is
// scrubbed again on its way out, but there each line follows its path and
// number, and a format that wants no name character before it (a quoted
// JSON name: "path-7-\"client_secret\": ...") would not be seen.
func (c *collector) scrubbed(text []byte) []byte {
	if c.scrub == nil {
		return text
	}
	out := c.scrub.Bytes(text)
	if c.onRedact != nil {
		if n := bytes.Count(out, redactionMark) - bytes.Count(text, redactionMark); n > 0 {
			c.onRedact(n)
		}
	}
	return out
}

// redactionMark starts every redaction shared/scrub writes.
var redactionMark = []byte("[REDACTED:")

// add appends one line unless a limit stops it.
func (c *collector) add(line []byte) bool {
	if c.head > 0 && c.lines >= c.head {
		c.cutHead = true
		return false
	}
	if len(c.buf)+len(line)+1 > c.max {
		if c.lines == 0 {
			c.buf = append(c.buf, line[:c.max]...)
			c.lines++
		}
		c.cutBytes = true
		return false
	}
	c.buf = append(append(c.buf, line...), '\n')
	c.lines++
	return true
}

func (c *collector) result(mode, warnings string) string {
	if c.lines == 0 {
		return "No matches found"
	}
	var b strings.Builder
	b.Grow(len(c.buf) + 128)
	b.Write(bytes.TrimSuffix(c.buf, []byte("\n")))
	if c.cutHead {
		unit := map[string]string{modeContent: "lines", modeFiles: "files", modeCount: "entries"}[mode]
		fmt.Fprintf(&b, "\n(showing the first %d %s; head_limit cut the rest)", c.head, unit)
	}
	if c.cutBytes {
		fmt.Fprintf(&b, "\n(output cut at %d bytes; narrow the search or set head_limit)", c.max)
	}
	if warnings != "" {
		fmt.Fprintf(&b, "\n(rg could not read everything: %s)", firstLine(warnings))
	}
	return b.String()
}

// vetter opens a file rg reported for vetting. A file that cannot be
// opened as a regular file (gone, or swapped for something else since rg
// read it) counts as all secret.
func (s *Searcher) vetter(path string) *lineVetter {
	f, err := s.ws.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return newLineVetter(s.scrub, errReader{err}, 0)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return newLineVetter(s.scrub, errReader{fmt.Errorf("%s is not a regular file", path)}, 0)
	}
	return newLineVetter(s.scrub, f, fi.Size())
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
