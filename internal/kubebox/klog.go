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
// lines kubectl itself wrote. Only a line that starts as a klog line
// does (mayBeKlog) is held back until it ends, as only a whole one can be
// judged; any other goes through as it comes, so a hook's partial line is
// never held (were the call cut off at its timeout before kubectl ended,
// what was held would be lost). It learns kubectl's PID once the process
// has started (SetPID), and holds everything until then.
type kubectlLogFilter struct {
	w     io.Writer
	ready chan struct{}
	once  sync.Once
	pid   string

	mu      sync.Mutex
	line    []byte // the partial line held back
	passing bool   // the current line is not kubectl's: it goes through
	flushed bool   // Flush has run: everything goes through
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
	if f.flushed {
		_, err := f.w.Write(p)
		return n, err
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i+1]
		}
		p = p[len(chunk):]
		if f.passing {
			if _, err := f.w.Write(chunk); err != nil {
				return 0, err
			}
			f.passing = i < 0
			continue
		}
		f.line = append(f.line, chunk...)
		switch {
		case i >= 0:
			if err := f.emit(); err != nil {
				return 0, err
			}
		case !mayBeKlog(f.line) || len(f.line) > maxHeldLine:
			if err := f.emit(); err != nil {
				return 0, err
			}
			f.passing = true
		}
	}
	return n, nil
}

// klogStamp is the shape of a klog line's start: its severity letter
// (L), the date and the time, digits as 0.
const klogStamp = "L0000 00:00:00.000000 "

// mayBeKlog says whether line, so far, starts as a klog line does.
func mayBeKlog(line []byte) bool {
	for i := 0; i < len(line) && i < len(klogStamp); i++ {
		c := line[i]
		switch klogStamp[i] {
		case 'L':
			if bytes.IndexByte([]byte("IWEF"), c) < 0 {
				return false
			}
		case '0':
			if c < '0' || c > '9' {
				return false
			}
		default:
			if c != klogStamp[i] {
				return false
			}
		}
	}
	return true
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
// What is written after it goes through as it comes.
func (f *kubectlLogFilter) Flush() error {
	f.SetPID(0)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushed = true
	if len(f.line) == 0 {
		return nil
	}
	return f.emit()
}
