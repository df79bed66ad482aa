package remoteproc

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxHeld bounds what the filter holds back while it waits for the
// wrapper's first line; past it, output passes on as it is.
const maxHeld = 1 << 20

// maxControl is the longest control line; a longer line that starts like
// one is ordinary output.
const maxControl = 64

// Filter separates the wrapper's control lines from the command's output.
// Until the wrapper's first line has come, stdout and stderr are held:
// if it never comes, what the stream carried is the exec client's or the
// runtime's own message (ClientMessage), not the command's output. Its
// writers may be used from different goroutines.
type Filter struct {
	stdout, stderr io.Writer
	afterExit      io.Writer // stderr after the exit line; nil = stderr

	mu       sync.Mutex
	started  bool   // the PID line has come
	held     []byte // stdout before it
	head     []byte // stderr before it
	pend     []byte // stderr that may be the start of a control line
	pid      int
	notFound bool
	ran      bool
	exited   bool
	killed   bool   // the call was killed: a client's last words may follow
	tail     []byte // stderr after the kill that may start the client's closing line
	code     int
	client   []byte // what the filter kept from the client

	startedCh, exitedCh chan struct{}
}

// NewFilter returns a filter passing the command's output to stdout and
// stderr. Stderr written after the wrapper's exit line goes to afterExit
// when it is not nil: a CLI client writes its own messages there (kubectl's
// "command terminated with exit code N"); ClientMessage keeps it.
func NewFilter(stdout, stderr io.Writer, clientAfterExit bool) *Filter {
	f := &Filter{stdout: stdout, stderr: stderr, startedCh: make(chan struct{}), exitedCh: make(chan struct{})}
	if clientAfterExit {
		f.afterExit = clientWriter{f}
	}
	return f
}

// Stdout is where the exec stream's stdout goes.
func (f *Filter) Stdout() io.Writer { return stdoutWriter{f} }

// Stderr is where the exec stream's stderr goes.
func (f *Filter) Stderr() io.Writer { return stderrWriter{f} }

// Started is closed when the wrapper has reported its PID.
func (f *Filter) Started() <-chan struct{} { return f.startedCh }

// Exited is closed when the wrapper has reported the command's exit.
func (f *Filter) Exited() <-chan struct{} { return f.exitedCh }

// PID is the wrapper's PID in the target, 0 before Started.
func (f *Filter) PID() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pid
}

// NotFound reports that the wrapper found no such command.
func (f *Filter) NotFound() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.notFound
}

// Ran reports that the wrapper started the command.
func (f *Filter) Ran() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ran
}

// ExitCode is the command's exit status as the wrapper reported it.
func (f *Filter) ExitCode() (code int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.code, f.exited
}

// ClientMessage is what the stream carried that was not the command's:
// everything, when the wrapper never started; the client's words after
// the exit line otherwise. Call it after Close.
func (f *Filter) ClientMessage() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	msg := string(f.client)
	if !f.started {
		msg = strings.TrimSpace(string(f.held) + "\n" + string(f.head))
	}
	msg = strings.TrimSpace(msg)
	if len(msg) > 1024 {
		msg = msg[:1024] + "..."
	}
	return msg
}

// closingWords start what kubectl prints when the process it ran was
// killed ("command terminated with exit code 137"): its words, not the
// command's. They end the stream, and need not start a line: a command
// killed mid-line leaves no newline before them. maxClosing bounds the
// whole line (an exit code has at most three digits; ten leave room).
const (
	closingWords = "command terminated with exit code "
	maxClosing   = len(closingWords) + 10 + 1
)

// closingSuffix is the length of the longest end of b that may be the
// start of the client's closing line (or all of it).
func closingSuffix(b []byte) int {
	for i := max(0, len(b)-maxClosing); i < len(b); i++ {
		if b[i] == closingWords[0] && mayBeClosing(b[i:]) {
			return len(b) - i
		}
	}
	return 0
}

// mayBeClosing says whether s, so far, is the start of the client's
// closing line.
func mayBeClosing(s []byte) bool {
	n := min(len(s), len(closingWords))
	if string(s[:n]) != closingWords[:n] {
		return false
	}
	rest := s[n:]
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	rest = rest[digits:]
	return len(rest) == 0 || digits > 0 && len(rest) == 1 && rest[0] == '\n'
}

// Killed says the call is being killed: stderr that comes after it is
// the client's (kubectl reporting the exit of what was killed), not the
// command's, when the filter keeps the client's words apart.
func (f *Filter) Killed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.killed = true
}

// Close is called when the stream has ended: stderr held as a possible
// control line is passed on.
func (f *Filter) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started && len(f.pend) > 0 {
		f.errOut(f.pend)
		f.pend = nil
	}
	if len(f.tail) > 0 {
		// What is held may start the closing line (errOut passed the rest
		// on): it is the client's when it is the whole of it.
		w := f.stderr
		if mayBeClosing(f.tail) && len(f.tail) > len(closingWords) {
			w = f.afterExit
		}
		_, _ = w.Write(f.tail)
		f.tail = nil
	}
}

type stdoutWriter struct{ f *Filter }

func (w stdoutWriter) Write(p []byte) (int, error) {
	f := w.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started {
		_, _ = f.stdout.Write(p)
		return len(p), nil
	}
	f.held = append(f.held, p...)
	if len(f.held) > maxHeld {
		f.release()
	}
	return len(p), nil
}

type stderrWriter struct{ f *Filter }

func (w stderrWriter) Write(p []byte) (int, error) {
	f := w.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started {
		f.head = append(f.head, p...)
		f.readHead()
		return len(p), nil
	}
	f.scan(p)
	return len(p), nil
}

type clientWriter struct{ f *Filter }

// Write is called with f.mu held.
func (w clientWriter) Write(p []byte) (int, error) {
	if room := maxHeld - len(w.f.client); room > 0 {
		w.f.client = append(w.f.client, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// readHead looks for the PID line at the start of stderr. Stderr that
// does not start with it never came from the wrapper.
func (f *Filter) readHead() {
	n := min(len(f.head), len(Prefix))
	if !bytes.HasPrefix(f.head, []byte(Prefix[:n])) || n < len(Prefix) {
		if len(f.head) > maxHeld {
			f.release()
		}
		return
	}
	i := bytes.IndexByte(f.head, '\n')
	if i < 0 {
		if len(f.head) > maxControl {
			f.release()
		}
		return
	}
	pid, err := strconv.Atoi(string(f.head[len(Prefix):i]))
	if err != nil || pid <= 0 {
		f.release()
		return
	}
	f.pid = pid
	rest := f.head[i+1:]
	f.head = nil
	f.release()
	f.scan(rest)
}

// release ends the holding: what was held passes on as output.
func (f *Filter) release() {
	if f.started {
		return
	}
	f.started = true
	close(f.startedCh)
	if len(f.held) > 0 {
		_, _ = f.stdout.Write(f.held)
	}
	if len(f.head) > 0 {
		f.scan(f.head)
	}
	f.held, f.head = nil, nil
}

// scan passes stderr on, taking out the wrapper's control lines.
func (f *Filter) scan(p []byte) {
	data := p
	if len(f.pend) > 0 {
		data = append(f.pend, p...)
		f.pend = nil
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, Prefix[0])
		if i < 0 {
			f.errOut(data)
			return
		}
		f.errOut(data[:i])
		data = data[i:]
		n := min(len(data), len(Prefix))
		if !bytes.HasPrefix(data, []byte(Prefix[:n])) {
			f.errOut(data[:1])
			data = data[1:]
			continue
		}
		nl := bytes.IndexByte(data, '\n')
		if n < len(Prefix) || (nl < 0 && len(data) <= maxControl) {
			f.pend = append([]byte(nil), data...) // wait for the rest
			return
		}
		if nl < 0 || !f.control(string(data[len(Prefix):nl])) {
			f.errOut(data[:1])
			data = data[1:]
			continue
		}
		data = data[nl+1:]
	}
}

// control acts on one control line; false when it is not one.
func (f *Filter) control(line string) bool {
	switch {
	case line == "notfound":
		f.notFound = true
		return true
	case line == "run":
		f.ran = true
		return true
	case strings.HasPrefix(line, "exit:"):
		code, err := strconv.Atoi(line[len("exit:"):])
		if err != nil || f.exited {
			return false
		}
		f.code, f.exited = code, true
		close(f.exitedCh)
		return true
	}
	return false
}

func (f *Filter) errOut(p []byte) {
	if len(p) == 0 {
		return
	}
	// Once the wrapper has said the command exited (or never ran), a
	// client's stderr carries its own words only. After a kill the
	// command's last output may still be on its way, followed by the
	// client's closing line: what may be the start of that line is held
	// (Close takes it off the end), the rest passes on as it comes, so
	// output that arrives while the kill runs is not held until the
	// stream ends (a caller who gave up waits only a moment for it).
	if f.killed && !f.exited && !f.notFound && f.afterExit != nil {
		f.tail = append(f.tail, p...)
		cut := len(f.tail) - closingSuffix(f.tail)
		if cut > 0 {
			_, _ = f.stderr.Write(f.tail[:cut])
			f.tail = append(f.tail[:0], f.tail[cut:]...)
		}
		return
	}
	if (f.exited || f.notFound) && f.afterExit != nil {
		_, _ = f.afterExit.Write(p)
		return
	}
	_, _ = f.stderr.Write(p)
}
