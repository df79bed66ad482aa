package shells

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/watch"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// maxTombs bounds the tombstones kept for forgotten shells.
const maxTombs = 256

// bgShell is one background shell: a process, or a call's work adopted
// when it outlived its budget (a job).
type bgShell struct {
	id          string
	owner       string // Command.Owner: only it may see the shell
	description string // the agent's words for it, to list known shells
	proc        *shell.Process
	job         *job           // set instead of proc for adopted work (Adopt)
	timeout     time.Duration  // a detached command's timeout, which still applies; 0 for none
	done        chan struct{}  // closed once the process is reaped and its output flushed
	watcher     *watch.Watcher // set for a watched process (watch_process)

	mu             sync.Mutex
	stdout, stderr *pending
	status         string    // "" while running; final once done is closed
	ended          time.Time // set with status
}

func (sh *bgShell) finished() bool {
	select {
	case <-sh.done:
		return true
	default:
		return false
	}
}

// tomb is what is left of a forgotten shell.
type tomb struct {
	owner  string
	status string
	note   string // why output may be missing; empty when it was all read
	// watcher keeps a watched process's events readable after BashOutput
	// has forgotten it; only the newest maxWatchedTombs tombs keep one.
	watcher *watch.Watcher
}

// maxWatchedTombs bounds the forgotten watched processes whose events
// are kept (each holds up to a ring of events).
const maxWatchedTombs = 16

// startBackground starts c as a background shell, watched by w when w
// is not nil, and returns its ID in a sentence.
func (m *Manager) startBackground(c Command, w *watch.Watcher) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", errClosed
	}
	if err := m.checkRoom(c.Owner, w != nil); err != nil {
		return "", err
	}
	sh := m.newShell(c.Owner, c.Description, w)
	sh.stdout.rel, sh.stderr.rel = m.newReleaser(), m.newReleaser()
	// Not the call's context: the shell outlives the call that started it.
	p, err := m.start(context.Background(), c, -1, sh.stdout, sh.stderr)
	if err != nil {
		if w != nil {
			w.Exit(-1, "failed to start")
		}
		return "", err
	}
	sh.proc = p
	m.shells[sh.id] = sh
	go m.reap(sh)
	if w != nil {
		return "Started watched process " + sh.id, nil
	}
	return "Started background shell " + sh.id, nil
}

// newShell is a shell not started yet, under a new ID, its streams
// without their releasers; m.mu must be held.
func (m *Manager) newShell(owner, description string, w *watch.Watcher) *bgShell {
	sh := &bgShell{id: m.newID(), owner: owner, description: description, done: make(chan struct{}), watcher: w}
	sh.stdout = &pending{mu: &sh.mu, limit: m.opts.MaxBuffered, watcher: w, stream: "stdout"}
	sh.stderr = &pending{mu: &sh.mu, limit: m.opts.MaxBuffered, watcher: w, stream: "stderr"}
	return sh
}

// checkRoom refuses a background shell beyond MaxBackground running, or
// a watched one beyond MaxWatched, naming the owner's so it can stop
// one; m.mu must be held.
func (m *Manager) checkRoom(owner string, watched bool) error {
	var running, watching int
	var mine []string
	for id, sh := range m.shells {
		if sh.finished() {
			continue
		}
		running++
		if sh.watcher != nil {
			watching++
		}
		if sh.owner == owner && (!watched || sh.watcher != nil) {
			mine = append(mine, id)
		}
	}
	slices.Sort(mine)
	switch {
	case running >= m.opts.MaxBackground:
		return fmt.Errorf("bash: %d background shells are running, the maximum; stop one with KillShell first (yours: %s)",
			running, orNone(strings.Join(mine, ", ")))
	case watched && watching >= m.opts.MaxWatched:
		return fmt.Errorf("watch process: %d watched processes are running, the maximum; stop one with KillShell first (yours: %s)",
			watching, orNone(strings.Join(mine, ", ")))
	}
	return nil
}

// newID returns an unused ID; m.mu must be held. 32 random bits keep a
// shell from being guessed or confused with another.
func (m *Manager) newID() string {
	for {
		var b [4]byte
		_, _ = rand.Read(b[:]) // never fails since Go 1.24
		id := "bash_" + hex.EncodeToString(b[:])
		if _, used := m.shells[id]; used {
			continue
		}
		if _, used := m.tombs[id]; used {
			continue
		}
		return id
	}
}

// reap waits for the shell's process (or job) and records how it ended.
func (m *Manager) reap(sh *bgShell) {
	status, code := sh.wait()
	sh.mu.Lock()
	// The sinks are never written after wait returns: the held partial
	// lines are final.
	sh.stdout.flush()
	sh.stderr.flush()
	sh.status = status
	sh.ended = time.Now()
	sh.mu.Unlock()
	if sh.watcher != nil {
		sh.watcher.Exit(code, sh.status)
	}
	close(sh.done)
	m.evictUnread()
}

// wait waits for the shell's process or job to end and says how it
// ended, with the exit code (-1 for none).
func (sh *bgShell) wait() (string, int) {
	if sh.job != nil {
		return sh.job.wait()
	}
	_, err := sh.proc.Wait()
	return statusOf(err, sh.timeout), exitCodeOf(err)
}

// stop ends the shell's process with its whole group (SIGTERM, then
// SIGKILL after a grace), or tells its job to stop.
func (sh *bgShell) stop() {
	if sh.job != nil {
		sh.job.stop()
		return
	}
	sh.proc.Stop()
}

// exitCodeOf is the exit code a process ended with, or -1 when it has
// none (killed by a signal, or failed to run).
func exitCodeOf(err error) int {
	var xe *sandbox.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &xe) && xe.Signal == "":
		return xe.Code
	}
	return -1
}

// statusOf says how a background process ended; timeout is the one it
// ran under (a detached foreground command's), 0 for none.
func statusOf(err error, timeout time.Duration) string {
	var xe *sandbox.ExitError
	switch {
	case err == nil:
		return "exited with code 0"
	case errors.As(err, &xe):
		return "exited with code " + exitCode(xe)
	case sandbox.KindOf(err) == sandbox.KindCanceled:
		return "killed" // only Kill, Forget and Close stop a background shell
	case sandbox.KindOf(err) == sandbox.KindTimeout && timeout > 0:
		return fmt.Sprintf("timed out after %s and was killed", timeout)
	}
	return "failed: " + err.Error()
}

// evictUnread discards the oldest finished shells beyond MaxBackground,
// so shells nobody reads cannot pile up buffered output.
func (m *Manager) evictUnread() {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ended []*bgShell
	for _, sh := range m.shells {
		if sh.finished() {
			ended = append(ended, sh)
		}
	}
	if len(ended) <= m.opts.MaxBackground {
		return
	}
	slices.SortFunc(ended, func(a, b *bgShell) int { return a.ended.Compare(b.ended) })
	note := fmt.Sprintf("its unread output was discarded: more than %d finished shells were left unread", m.opts.MaxBackground)
	for _, sh := range ended[:len(ended)-m.opts.MaxBackground] {
		delete(m.shells, sh.id)
		m.bury(sh.id, tomb{owner: sh.owner, status: sh.status, note: note, watcher: sh.watcher})
	}
}

// bury records a forgotten shell; m.mu must be held.
func (m *Manager) bury(id string, t tomb) {
	m.tombs[id] = t
	m.tombList = append(m.tombList, id)
	if len(m.tombList) > maxTombs {
		delete(m.tombs, m.tombList[0])
		m.tombList = m.tombList[1:]
	}
	if t.watcher == nil {
		return
	}
	kept := 0
	for i := len(m.tombList) - 1; i >= 0; i-- {
		old := m.tombs[m.tombList[i]]
		if old.watcher == nil {
			continue
		}
		if kept++; kept > maxWatchedTombs {
			old.watcher = nil
			m.tombs[m.tombList[i]] = old
		}
	}
}

// lookup finds owner's shell or its tombstone; m.mu must not be held.
// Another owner's shell is answered as if it did not exist.
func (m *Manager) lookup(owner, id string) (*bgShell, *tomb, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sh, ok := m.shells[id]; ok && sh.owner == owner {
		return sh, nil, nil
	}
	if t, ok := m.tombs[id]; ok && t.owner == owner {
		return nil, &t, nil
	}
	var known []string
	for id, sh := range m.shells {
		if sh.owner != owner {
			continue
		}
		state := "running"
		if sh.finished() {
			state = "finished"
		}
		if sh.description != "" {
			state += ": " + sh.description
		}
		known = append(known, id+" ("+state+")")
	}
	if len(known) == 0 {
		return nil, nil, fmt.Errorf("no background shell with ID %q (there are none)", id)
	}
	slices.Sort(known)
	return nil, nil, fmt.Errorf("no background shell with ID %q (known: %s)", id, strings.Join(known, ", "))
}

// Output returns what shell id printed since the previous call, stdout
// and stderr apart, under its status. With a filter (a Go regexp), only
// the lines it matches are returned; the others are consumed all the
// same. Once the final status has been returned with all output, the
// shell is forgotten and later calls get only its status.
func (m *Manager) Output(owner, id, filter string) (string, error) {
	var re *regexp.Regexp
	if filter != "" {
		var err error
		if re, err = regexp.Compile(filter); err != nil {
			return "", fmt.Errorf("bash output: invalid filter: %w", err)
		}
	}
	sh, t, err := m.lookup(owner, id)
	if err != nil {
		return "", fmt.Errorf("bash output: %w", err)
	}
	if t != nil {
		return joinLines("Status: "+t.status, noteOr(t.note, "(no new output)")), nil
	}

	sh.mu.Lock()
	status := sh.status
	outText, outDropped := sh.stdout.take()
	errText, errDropped := sh.stderr.take()
	sh.mu.Unlock()
	if status == "" {
		status = "running"
	} else {
		m.mu.Lock()
		if m.shells[id] == sh {
			delete(m.shells, id)
			m.bury(id, tomb{owner: owner, status: status, watcher: sh.watcher})
		}
		m.mu.Unlock()
	}

	hadOutput := outText != "" || errText != ""
	if re != nil {
		outText, errText = filterLines(re, outText), filterLines(re, errText)
	}
	out, errOut := textClip(outText), textClip(errText)
	ob, eb := fit(out, errOut, m.opts.MaxOutput)
	parts := []string{
		"Status: " + status,
		m.section("stdout", outDropped, out.render(ob)),
		m.section("stderr", errDropped, errOut.render(eb)),
	}
	if parts[1] == "" && parts[2] == "" {
		if hadOutput {
			parts = append(parts, "(no new output matched the filter)")
		} else {
			parts = append(parts, "(no new output)")
		}
	}
	return strings.TrimSuffix(joinLines(parts...), "\n"), nil
}

func (m *Manager) section(name string, dropped int, text string) string {
	if dropped == 0 && text == "" {
		return ""
	}
	s := "--- " + name + " ---\n"
	if dropped > 0 {
		s += fmt.Sprintf("[... %d earlier bytes dropped: more than %d bytes were left unread ...]\n", dropped, m.opts.MaxBuffered)
	}
	return s + text
}

func noteOr(note, otherwise string) string {
	if note != "" {
		return "(" + note + ")"
	}
	return otherwise
}

// filterLines keeps the lines of text that re matches, each with its
// newline.
func filterLines(re *regexp.Regexp, text string) string {
	var b strings.Builder
	for line := range strings.SplitAfterSeq(text, "\n") {
		if re.MatchString(strings.TrimSuffix(line, "\n")) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// Kill stops shell id with its whole process group (SIGTERM, then
// SIGKILL after a grace) and waits for it. Its unread output stays
// readable with Output.
func (m *Manager) Kill(owner, id string) (string, error) {
	sh, t, err := m.lookup(owner, id)
	if err != nil {
		return "", fmt.Errorf("kill shell: %w", err)
	}
	if t != nil {
		return fmt.Sprintf("Background shell %s is not running (status: %s)", id, t.status), nil
	}
	if !sh.finished() {
		sh.stop()
		<-sh.done
		if sh.status == "killed" {
			return "Killed background shell " + id, nil
		}
	}
	// It ended on its own, maybe just before Stop reached it.
	return fmt.Sprintf("Background shell %s is not running (status: %s)", id, sh.status), nil
}

// Has reports whether id names a background shell of owner in this
// manager, live or remembered, so a server with several managers can
// route by ID.
func (m *Manager) Has(owner, id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	sh, live := m.shells[id]
	t, buried := m.tombs[id]
	return live && sh.owner == owner || buried && t.owner == owner
}

// Forget kills owner's background shells, each with its process tree,
// waits for them, and drops them and their tombstones: the owner (an
// MCP session) has gone, and nobody else may read them.
func (m *Manager) Forget(owner string) {
	m.mu.Lock()
	var gone []*bgShell
	for id, sh := range m.shells {
		if sh.owner == owner {
			gone = append(gone, sh)
			delete(m.shells, id)
		}
	}
	kept := m.tombList[:0]
	for _, id := range m.tombList {
		if m.tombs[id].owner == owner {
			delete(m.tombs, id)
			continue
		}
		kept = append(kept, id)
	}
	m.tombList = kept
	m.mu.Unlock()
	stopShells(gone)
}

// stopShells stops each shell with its process group, all at once, and
// waits until every one has ended.
func stopShells(shells []*bgShell) {
	for _, sh := range shells {
		sh.stop()
	}
	for _, sh := range shells {
		<-sh.done
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
