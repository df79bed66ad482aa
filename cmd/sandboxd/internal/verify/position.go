package verify

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// positionLine matches the "file:line[:col]: message" lines compilers and
// go vet print. The file may not start with a space, so an indented line
// of a multi-line message is never taken for a new position.
var positionLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^\s:][^:]*):(\d+)(?::(\d+))?: (.+)$`) })

// parsePosition reads a "file:line[:col]: message" line, with or without
// the "vet: " go vet puts before a type error.
func parsePosition(line string) (Finding, bool) {
	line = strings.TrimPrefix(line, "vet: ")
	m := positionLine().FindStringSubmatch(line)
	if m == nil {
		return Finding{}, false
	}
	ln, err := strconv.Atoi(m[2])
	if err != nil || ln <= 0 {
		return Finding{}, false
	}
	col := 0
	if m[3] != "" {
		if col, err = strconv.Atoi(m[3]); err != nil {
			return Finding{}, false
		}
	}
	return Finding{File: m[1], Line: ln, Col: col, Message: m[4]}, true
}

// splitPosition reads "file:line:col" as a JSON position field gives it
// ("posn" in go vet -json); the file itself may hold colons.
func splitPosition(posn string) (file string, line, col int) {
	file = posn
	nums := make([]int, 0, 2)
	for range 2 {
		i := strings.LastIndexByte(file, ':')
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(file[i+1:])
		if err != nil || n < 0 {
			break
		}
		nums = append(nums, n)
		file = file[:i]
	}
	switch len(nums) {
	case 2:
		return file, nums[1], nums[0]
	case 1:
		return file, nums[0], 0
	}
	return posn, 0, 0
}
