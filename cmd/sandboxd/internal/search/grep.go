package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	c := collector{max: s.maxOutput, head: req.HeadLimit}
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
	args        []string
	mode        string
	filter      *pathFilter // nil: rg's lines are passed on as they are
	lineNumbers bool
}

func (s *Searcher) planGrep(req GrepRequest) (grepPlan, error) {
	p := grepPlan{mode: req.OutputMode, lineNumbers: req.LineNumbers}
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

	args := append(slices.Clip(baseArgs), "--color=never", "--with-filename", "--no-heading")
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
			// NUL after each path, so paths are read back unambiguously.
			args = append(args, "--null")
		}
	}

	switch p.mode {
	case modeFiles:
		args = append(args, "--files-with-matches")
	case modeCount:
		args = append(args, "--count")
	case modeContent:
		// rg holds a long line whole, but prints only its start, so what
		// is read back here stays small whatever the files hold.
		args = append(args, "--max-columns="+strconv.Itoa(maxColumns), "--max-columns-preview")
		// Filtered lines are read with their line numbers, which say
		// whether a line matched (':') or is context ('-').
		if req.LineNumbers || p.filter != nil {
			args = append(args, "--line-number")
		} else {
			args = append(args, "--no-line-number")
		}
		for _, c := range []struct {
			flag string
			n    int
		}{{"--after-context=", req.After}, {"--before-context=", req.Before}, {"--context=", req.Context}} {
			if c.n > 0 {
				args = append(args, c.flag+strconv.Itoa(c.n))
			}
		}
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
// when it has enough.
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
}

// read consumes rg's output; false means the result is full and rg can be
// stopped.
func (c *collector) read(r *bufio.Reader, p grepPlan) bool {
	delim := byte('\n')
	if p.filter != nil && p.mode == modeFiles {
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
			return true
		}
	}
}

// take handles one record from rg.
func (c *collector) take(rec []byte, p grepPlan) bool {
	if p.filter == nil {
		return c.add(rec)
	}
	if p.mode == modeFiles {
		if !p.filter.keep(rec) {
			return true
		}
		return c.add(rec)
	}
	i := bytes.IndexByte(rec, 0)
	if i < 0 {
		if string(rec) == "--" {
			c.pendSep = c.lines > 0
			return true
		}
		return c.add(rec)
	}
	path, rest := rec[:i], rec[i+1:]
	if !p.filter.keep(path) {
		return true
	}
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
	c.scratch = append(c.scratch, rest[num:]...)
	return c.add(c.scratch)
}

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
