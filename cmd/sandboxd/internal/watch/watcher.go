package watch

import (
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults applied by New to zero Options fields, and the most one Page
// carries.
const (
	DefaultMaxLine   = 4 << 10
	DefaultMaxEvents = 256
	pageEvents       = 64
	pageBytes        = 64 << 10
)

// Options configure a Watcher.
type Options struct {
	// Patterns mark a line as an error (see Compile); the first that
	// matches is named in the event.
	Patterns []*regexp.Regexp
	// Idle is the silence that makes an idle event; 0 means none.
	Idle time.Duration
	// MaxLine cuts longer lines; 0 means 4 KiB.
	MaxLine int
	// MaxEvents is the size of the ring; 0 means 256.
	MaxEvents int
}

// Watcher matches a process's output and keeps the events. It is safe
// for concurrent use: streams are fed from their reader goroutines while
// an agent reads the events.
type Watcher struct {
	opts Options

	mu         sync.Mutex
	ring       []Event // len MaxEvents once full; ring[head] is the oldest
	head       int
	nextID     int64
	lines      map[string]*lineState
	lastOutput time.Time
	idleArmed  bool // the timer will fire for the current silence
	timer      *time.Timer
	exited     bool
}

// lineState is one stream's line in progress.
type lineState struct {
	buf      []byte // at most MaxLine bytes
	number   int    // lines finished so far
	skipping bool   // the line was cut: drop the rest up to its newline
}

// New returns a Watcher for a process that starts now: its first
// silence is counted from here.
func New(opts Options) *Watcher {
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	w := &Watcher{opts: opts, nextID: 1, lines: map[string]*lineState{}, lastOutput: time.Now()}
	if opts.Idle > 0 {
		w.idleArmed = true
		w.timer = time.AfterFunc(opts.Idle, w.checkIdle)
	}
	return w
}

// Activity notes that the process printed something, even a piece of a
// line not released yet: it is not idle.
func (w *Watcher) Activity() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastOutput = time.Now()
	if w.timer != nil && !w.idleArmed && !w.exited {
		w.idleArmed = true
		w.timer.Reset(w.opts.Idle)
	}
}

// checkIdle runs when the timer fires: an idle event if the silence is
// long enough, else the timer is set for the rest of it. Resetting on
// every write instead would cost a timer operation per line.
func (w *Watcher) checkIdle() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.exited || !w.idleArmed {
		return
	}
	silent := time.Since(w.lastOutput)
	if silent < w.opts.Idle {
		w.timer.Reset(w.opts.Idle - silent)
		return
	}
	w.idleArmed = false
	w.add(Event{Kind: KindIdle, SilentMS: silent.Milliseconds()})
}

// Output feeds text the process wrote to stream (already scrubbed), in
// pieces of any size.
func (w *Watcher) Output(stream, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ls := w.lines[stream]
	if ls == nil {
		ls = &lineState{}
		w.lines[stream] = ls
	}
	for text != "" {
		piece, rest, ended := strings.Cut(text, "\n")
		text = rest
		if ls.skipping {
			ls.skipping = !ended
			continue
		}
		if room := w.opts.MaxLine - len(ls.buf); len(piece) > room {
			ls.buf = append(ls.buf, piece[:room]...)
			w.endLine(stream, ls, true)
			ls.skipping = !ended
			continue
		}
		ls.buf = append(ls.buf, piece...)
		if ended {
			w.endLine(stream, ls, false)
		}
	}
}

// endLine matches the line in ls.buf and starts the next; w.mu must be
// held.
func (w *Watcher) endLine(stream string, ls *lineState, cut bool) {
	ls.number++
	line := strings.TrimSuffix(string(ls.buf), "\r")
	ls.buf = ls.buf[:0]
	if cut {
		line = trimPartialRune(line)
	}
	for _, re := range w.opts.Patterns {
		if re.MatchString(line) {
			w.add(Event{Kind: KindMatch, Stream: stream, LineNumber: ls.number, Line: line, Truncated: cut, Pattern: re.String()})
			return
		}
	}
}

// trimPartialRune drops a rune the cut split in two.
func trimPartialRune(s string) string {
	for i := 0; i < utf8.UTFMax && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// Exit records how the process ended, after matching the line each
// stream ended on without a newline. Later output and silences are
// ignored; a second Exit is.
func (w *Watcher) Exit(code int, status string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.exited {
		return
	}
	for _, stream := range []string{"stdout", "stderr"} {
		if ls := w.lines[stream]; ls != nil && len(ls.buf) > 0 && !ls.skipping {
			w.endLine(stream, ls, false)
		}
	}
	w.exited = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.add(Event{Kind: KindExit, ExitCode: &code, Status: status})
}

// add stamps e and puts it in the ring; w.mu must be held.
func (w *Watcher) add(e Event) {
	e.ID, e.Time = w.nextID, time.Now()
	w.nextID++
	if len(w.ring) < w.opts.MaxEvents {
		w.ring = append(w.ring, e)
		return
	}
	w.ring[w.head] = e
	w.head = (w.head + 1) % len(w.ring)
}

// Events returns the events with IDs after since, oldest first, up to
// what one answer holds.
func (w *Watcher) Events(since int64) Page {
	w.mu.Lock()
	defer w.mu.Unlock()
	since = max(since, 0)
	p := Page{Events: []Event{}, LastEventID: w.nextID - 1, Exited: w.exited}
	oldest := w.nextID - int64(len(w.ring))
	if oldest > since+1 {
		p.Dropped = oldest - since - 1
	}
	size := 0
	for i := range w.ring {
		e := w.ring[(w.head+i)%len(w.ring)]
		if e.ID <= since {
			continue
		}
		size += len(e.Line) + 128
		if len(p.Events) == pageEvents || len(p.Events) > 0 && size > pageBytes {
			p.More = true
			break
		}
		p.Events = append(p.Events, e)
	}
	return p
}
