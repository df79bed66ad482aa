package files

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/altairalabs/promptkit-sandbox/shared/scrub"
	"github.com/altairalabs/promptkit-sandbox/shared/workspace"
)

// Defaults for the zero Options fields.
const (
	DefaultMaxLines      = 2000
	DefaultMaxLineLength = 2000
	DefaultMaxReadBytes  = 256 << 10
)

// Options bound what Read returns. Zero or negative fields take the
// defaults.
type Options struct {
	MaxLines      int // lines per Read when it gives no limit: 2000
	MaxLineLength int // characters of a line Read shows before cutting it: 2000
	MaxReadBytes  int // cap on a whole Read result: 256 KiB
	// AllowGitWrites lets Write and Edit change files under .git, which
	// are refused by default (ErrGitDir).
	AllowGitWrites bool
	// Scrubber scrubs a long line before Read cuts it, so a secret the
	// cut would split is redacted whole; nil knows the formats alone,
	// not the registered values.
	Scrubber *scrub.Scrubber
}

// Files is the file tools over one workspace. It is safe for concurrent
// use; what each session has read lives in the Ledger it passes in.
type Files struct {
	ws   *workspace.Workspace
	opts Options

	// mu makes checking a file against a ledger and writing it one step
	// for the sessions of this process, so two of them editing the same
	// file cannot both pass the check and the later silently undo the
	// earlier.
	mu sync.Mutex
}

// New returns the file tools over ws.
func New(ws *workspace.Workspace, opts Options) *Files {
	if opts.MaxLines <= 0 {
		opts.MaxLines = DefaultMaxLines
	}
	if opts.MaxLineLength <= 0 {
		opts.MaxLineLength = DefaultMaxLineLength
	}
	if opts.MaxReadBytes <= 0 {
		opts.MaxReadBytes = DefaultMaxReadBytes
	}
	return &Files{ws: ws, opts: opts}
}

var (
	errNotRead = errors.New("file has not been read in this session; Read it first")
	errStale   = errors.New("file changed since it was read; Read it again")
)

// target is an existing path resolved for Write and Edit: rel keys the
// ledger, abs names it in results.
type target struct {
	rel, abs string
	info     fs.FileInfo // nil when the file does not exist
}

// locate resolves path and stats what it names (following a symlink
// inside the root). A missing file is no error: Write creates it.
func (f *Files) locate(path string) (target, error) {
	rel, err := f.ws.Rel(path)
	if err != nil {
		return target{}, err
	}
	abs, err := f.ws.Abs(path)
	if err != nil {
		return target{}, err
	}
	if err := f.checkProtected(path, rel); err != nil {
		return target{}, err
	}
	t := target{rel: rel, abs: abs}
	fi, err := f.ws.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return t, nil
	case err != nil:
		return target{}, err
	case fi.IsDir():
		return target{}, errors.New("it is a directory, not a file")
	case !fi.Mode().IsRegular():
		return target{}, fmt.Errorf("it is not a regular file (%s)", fi.Mode().Type())
	}
	t.info = fi
	return t, nil
}

// checkFresh refuses a file this ledger has not read, or whose content is
// no longer what was read. Size tells a change cheaply; equal size (or
// mtime) proves nothing, so the content's hash decides; sum computes the
// current one, only when it is needed.
func (f *Files) checkFresh(l *Ledger, t target, sum func() ([sha256.Size]byte, error)) error {
	seen, ok := l.get(f.ws, t.rel)
	if !ok {
		return errNotRead
	}
	if t.info.Size() == seen.size {
		cur, err := sum()
		if err != nil {
			return err
		}
		if cur == seen.sum {
			return nil
		}
	}
	if !t.info.ModTime().Equal(seen.mtime) {
		return fmt.Errorf("%w (it was modified at %s)", errStale, t.info.ModTime().Format("2006-01-02 15:04:05.000 MST"))
	}
	return errStale
}

// hashFile is the SHA-256 of the file at path, streamed.
func (f *Files) hashFile(path string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	fh, err := f.ws.Open(path)
	if err != nil {
		return sum, err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// remember records what the session now knows the file holds, after it
// wrote data there, so a follow-up Edit need not Read again.
func (f *Files) remember(l *Ledger, path, rel string, data []byte) {
	st := state{size: int64(len(data)), sum: sha256.Sum256(data)}
	if fi, err := f.ws.Stat(path); err == nil {
		st.mtime = fi.ModTime()
	}
	l.put(f.ws, rel, st)
}

// countLines counts lines as Read numbers them: a last line without a
// newline counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// plural is "1 line", "2 lines".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
