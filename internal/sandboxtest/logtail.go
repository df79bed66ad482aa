package sandboxtest

import (
	"io"
	"testing"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
)

// LogTail returns a writer (for a plugin host's logger, say) that keeps
// the last n bytes written to it and, if t has failed by the time it
// ends, logs them under the heading what: the plugin's last words when
// it crashed or a call went wrong, without the noise of a passing run.
func LogTail(t testing.TB, what string, n int) io.Writer {
	l := &bounded.Tail{Max: n}
	t.Cleanup(func() {
		if t.Failed() {
			b := l.Bytes()
			t.Logf("%s (last %d bytes):\n%s", what, len(b), b)
		}
	})
	return l
}
