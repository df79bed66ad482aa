package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// baseArgs are given to every rg run. --no-config keeps RIPGREP_CONFIG_PATH
// from changing what is searched or how lines look; --no-require-git makes
// a workspace that is not a git repository honour its .gitignore files;
// --hidden finds .github and the like, and the one -g rg is ever given
// keeps .git out (an exclusion, so it cannot un-ignore anything). There is
// deliberately no --follow.
var baseArgs = []string{"--no-config", "--no-require-git", "--hidden", "--glob=!.git"}

// typeName is the rg file type a user's file-name glob is defined as.
const typeName = "pksglob"

const stderrCap = 16 << 10

// rgRun is one running rg whose stdout is read as it comes.
type rgRun struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	stderr cappedBuffer
	cancel context.CancelFunc
	parent context.Context
	halted bool
}

func (s *Searcher) start(ctx context.Context, args []string) (*rgRun, error) {
	rctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(rctx, s.rg, args...)
	cmd.Dir = s.ws.Dir()
	cmd.Env = s.env
	if s.cred != nil {
		// rg is started as the agent's user directly, no supervisor in
		// between: it starts nothing, and being root, sandboxd can still
		// kill it when ctx ends.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	// Should anything rg started hold its stdout open, a cancelled call
	// still returns.
	cmd.WaitDelay = time.Second
	r := &rgRun{cmd: cmd, cancel: cancel, parent: ctx}
	r.stderr.max = stderrCap
	cmd.Stderr = &r.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("ripgrep: %w", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("starting ripgrep: %w", err)
	}
	r.out = bufio.NewReaderSize(stdout, 64<<10)
	return r, nil
}

// halt stops rg once enough of its output has been read.
func (r *rgRun) halt() {
	r.halted = true
	r.cancel()
}

// wait reaps rg and returns what it complained of when that is no
// failure. Exit 1 is "nothing found"; 2 is an error, but rg also exits 2
// after output when some file could not be read, so with output it is a
// warning. A halted rg was killed on purpose.
func (r *rgRun) wait(sawOutput bool) (warnings string, err error) {
	defer r.cancel()
	werr := r.cmd.Wait()
	if r.parent.Err() != nil {
		return "", r.parent.Err()
	}
	if r.halted || werr == nil {
		return "", nil
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		return "", fmt.Errorf("ripgrep: %w", werr)
	}
	msg := r.stderr.message()
	switch ee.ExitCode() {
	case 1:
		return "", nil
	case 2:
		if sawOutput {
			return msg, nil
		}
		if msg == "" {
			msg = "exit status 2"
		}
		return "", fmt.Errorf("ripgrep: %s", msg)
	}
	if msg != "" {
		return "", fmt.Errorf("ripgrep: %w: %s", werr, msg)
	}
	return "", fmt.Errorf("ripgrep: %w", werr)
}

// cappedBuffer keeps the first max bytes written to it; rg's stderr is only
// ever quoted, and a walk over an unreadable tree can complain at length.
type cappedBuffer struct {
	buf bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// message is rg's stderr as one trimmed message.
func (c *cappedBuffer) message() string {
	return string(bytes.TrimSpace(c.buf.Bytes()))
}

// maxRecord bounds what is held of one record of rg's output: a path,
// or a line of content, which rg itself cuts at maxColumns. A longer
// record (a path past any file system's limit) is read to its end and
// dropped beyond this, so what one line costs stays bounded.
const maxRecord = 16 << 10

// readRecord reads one record, up to delim, and returns it without delim.
// It holds at most limit bytes of it: the rest of a longer record is read
// and dropped, and cut says so. It returns a slice of r's buffer when the
// record fits there (the usual case), so most records cost no
// allocation; the slice is valid until the next read. err is nil when a
// delim ended the record.
func readRecord(r *bufio.Reader, delim byte, limit int, long *[]byte) (rec []byte, cut bool, err error) {
	rec, err = r.ReadSlice(delim)
	if err == nil {
		rec = rec[:len(rec)-1]
	}
	if err != bufio.ErrBufferFull {
		if len(rec) > limit {
			return rec[:limit], true, err
		}
		return rec, false, err
	}
	*long = append((*long)[:0], rec[:min(len(rec), limit)]...)
	cut = len(rec) > limit
	for err == bufio.ErrBufferFull {
		rec, err = r.ReadSlice(delim)
		if err == nil {
			rec = rec[:len(rec)-1]
		}
		if room := limit - len(*long); len(rec) > room {
			rec, cut = rec[:room], true
		}
		*long = append(*long, rec...)
	}
	return *long, cut, err
}
