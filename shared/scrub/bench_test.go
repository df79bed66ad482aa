package scrub

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goSource is the first 2,000 lines of a real Go file, the common case
// of a Read: ordinary code with the words token, secret and password.
func goSource(b *testing.B) string {
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip(err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), "src", "net", "http", "server.go"))
	if err != nil {
		b.Skip(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	return strings.Join(lines[:min(2000, len(lines))], "")
}

func BenchmarkScrubGoSource(b *testing.B) {
	s := New(map[string]string{"X": "registered-value"})
	text := goSource(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s.String(text)
	}
}
