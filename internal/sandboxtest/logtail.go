package sandboxtest

import (
	"io"
	"sync"
	"testing"
)

// LogTail returns a writer (for a plugin host's logger, say) that keeps
// the last n bytes written to it and, if t has failed by the time it
// ends, logs them under the heading what: the plugin's last words when
// it crashed or a call went wrong, without the noise of a passing run.
func LogTail(t testing.TB, what string, n int) io.Writer {
	l := &logTail{n: n}
	t.Cleanup(func() {
		if t.Failed() {
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Logf("%s (last %d bytes):\n%s", what, len(l.buf), l.buf)
		}
	})
	return l
}

type logTail struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - l.n; over > 0 {
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
	return len(p), nil
}
