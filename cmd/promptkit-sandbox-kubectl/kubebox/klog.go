package kubebox

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"sync"
)

// kubectl writes its own log lines (klog's format) to the same stderr
// as the remote command's: a stdin copy the remote side closed first
// logs `E1126 14:11:24.276121   17490 v2.go:104] "Unhandled Error"
// err="write tcp ...: broken pipe"` between the hook's bytes. klogHeader
// matches such a line; the number after the time is the writing
// process's PID, which tells kubectl's lines from a hook's own klog
// output (its PID is one in the container, and the line came through
// the stream, not from kubectl).
var klogHeader = regexp.MustCompile(`^[IWEF][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} +([0-9]+) [^ \]]+:[0-9]+\] `)

// maxHeldLine bounds the partial line kubectlLogFilter holds back: a
// longer one cannot be a klog header's line and goes through at once.
const maxHeldLine = 64 << 10

// kubectlLogFilter passes a kubectl process's stderr on without the log
// lines kubectl itself wrote. It holds a line back until it ends (or
// Flush), as only a whole line can be judged; it learns kubectl's PID
// once the process has started (SetPID), and holds everything until then.
type kubectlLogFilter struct {
	w     io.Writer
	ready chan struct{}
	once  sync.Once
	pid   string

	mu   sync.Mutex
	line []byte // the partial line held back
}

func newKubectlLogFilter(w io.Writer) *kubectlLogFilter {
	return &kubectlLogFilter{w: w, ready: make(chan struct{})}
}

// SetPID tells the filter kubectl's PID (0 when it did not start).
func (f *kubectlLogFilter) SetPID(pid int) {
	f.once.Do(func() {
		f.pid = strconv.Itoa(pid)
		close(f.ready)
	})
}

func (f *kubectlLogFilter) Write(p []byte) (int, error) {
	<-f.ready
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.line = append(f.line, p...)
			if len(f.line) > maxHeldLine {
				if err := f.emit(); err != nil {
					return 0, err
				}
			}
			break
		}
		f.line = append(f.line, p[:i+1]...)
		p = p[i+1:]
		if err := f.emit(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// emit writes the held line unless it is kubectl's own.
func (f *kubectlLogFilter) emit() error {
	line := f.line
	f.line = f.line[:0]
	// klog lines start with their severity letter: most lines of a hook's
	// output are ruled out by that byte, without the expression.
	if len(line) > 0 && bytes.IndexByte([]byte("IWEF"), line[0]) >= 0 {
		if m := klogHeader.FindSubmatch(line); m != nil && string(m[1]) == f.pid {
			return nil
		}
	}
	_, err := f.w.Write(line)
	return err
}

// Flush writes what is held: the end of the output, without a newline.
func (f *kubectlLogFilter) Flush() error {
	f.SetPID(0)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.line) == 0 {
		return nil
	}
	return f.emit()
}
