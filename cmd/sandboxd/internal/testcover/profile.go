package testcover

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Block is a stretch of code the coverage tool counts as one, by its
// first and last positions (1-based lines and columns).
type Block struct {
	StartLine, StartCol, EndLine, EndCol int
}

// Has reports whether the block spans line.
func (b Block) Has(line int) bool { return b.StartLine <= line && line <= b.EndLine }

// parseProfile reads a cover profile ("mode: set" then one line per
// block: import/path/file.go:L.C,L.C statements count) and returns, by
// file base name, the blocks that ran: one package's files share a
// directory, so the base names them. A block listed twice (it can be,
// in count mode) ran if either entry says so.
func parseProfile(data []byte) (map[string][]Block, error) {
	ran := map[string][]Block{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if !strings.HasPrefix(line, "mode: ") {
				return nil, fmt.Errorf("cover profile: first line %q is not a mode", line)
			}
			continue
		}
		if line == "" {
			continue
		}
		file, b, count, err := parseBlock(line)
		if err != nil {
			return nil, err
		}
		if count > 0 {
			base := path.Base(file)
			ran[base] = append(ran[base], b)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cover profile: %w", err)
	}
	return ran, nil
}

// parseBlock reads "file:L.C,L.C n count"; the file name may hold a
// colon, so the position is found from the right.
func parseBlock(line string) (string, Block, int, error) {
	bad := func() (string, Block, int, error) {
		return "", Block{}, 0, fmt.Errorf("cover profile: bad line %q", line)
	}
	fields := strings.Fields(line)
	if len(fields) < 3 {
		return bad()
	}
	count, err := strconv.Atoi(fields[len(fields)-1])
	if err != nil {
		return bad()
	}
	loc := strings.Join(fields[:len(fields)-2], " ")
	colon := strings.LastIndexByte(loc, ':')
	if colon < 0 {
		return bad()
	}
	from, to, ok := strings.Cut(loc[colon+1:], ",")
	if !ok {
		return bad()
	}
	var b Block
	if b.StartLine, b.StartCol, ok = lineCol(from); !ok {
		return bad()
	}
	if b.EndLine, b.EndCol, ok = lineCol(to); !ok {
		return bad()
	}
	return loc[:colon], b, count, nil
}

func lineCol(s string) (int, int, bool) {
	l, c, ok := strings.Cut(s, ".")
	if !ok {
		return 0, 0, false
	}
	line, err1 := strconv.Atoi(l)
	col, err2 := strconv.Atoi(c)
	return line, col, err1 == nil && err2 == nil
}
