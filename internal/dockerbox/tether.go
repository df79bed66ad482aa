package dockerbox

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/moby/moby/api/types/mount"

	"github.com/altairalabs/promptkit-sandbox/internal/resident"
	"github.com/altairalabs/promptkit-sandbox/internal/tether"
)

// With transport api, a docker_run container runs its command under a
// tether (package tether): the plugin's own executable, bind-mounted
// read-only, holding the command to the plugin's attach connection. A
// plugin that dies however it dies — SIGKILL, a crash, its host's
// process group killed — or that is slow to be scheduled after its host
// died, ends its calls' containers all the same: the kernel closes the
// connection, the engine closes the container's stdin, the tether ends
// the container and the engine removes it. Without the tether such a
// container ran until its command ended by itself, and only a later
// plugin start's stale sweep removed it.
//
// The tether needs the engine's init (`init: true`, the default), an
// engine that sees the plugin's files (a local one) and a container that
// may execute them. When either is missing, the
// engine refuses the container (create or start) or the init cannot
// execute the tether: the sandbox then drops the tether for good and
// runs the call again without it.

// tetherTarget is where the tether is mounted in a container.
const tetherTarget = residentDir + "/tether"

// tetherBin is the executable mounted as the tether.
type tetherBin struct{ path string }

// selfTether is the plugin's executable as a tether for a sandbox's
// containers, or why there is none. Without an init (`init: false`) the
// command is to be PID 1, which nothing in the container can kill, so
// the tether could not end it: such containers go without one. A plugin
// built with cgo is not static and cannot run in any container (see
// resident.SelfImage, which tests point at a static build).
func selfTether(init bool) (*tetherBin, error) {
	if !init {
		return nil, errors.New("init: false runs the command as PID 1, which a tether could not end")
	}
	img, err := resident.SelfImage()
	if err != nil {
		return nil, err
	}
	return &tetherBin{path: img.Path}, nil
}

// mount is the tether's bind mount.
func (b *tetherBin) mount() mount.Mount {
	return mount.Mount{Type: mount.TypeBind, Source: b.path, Target: tetherTarget, ReadOnly: true}
}

// refused reports whether err, from creating or starting a container,
// is the engine refusing the tether: its mount (an engine that does not
// see the plugin's file) or its exec (a file the container may not
// execute). The engine's message names the path.
func (b *tetherBin) refused(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, b.path) || strings.Contains(msg, tetherTarget)
}

// tetherArgs is the container's entrypoint under the tether: the
// image's own entrypoint runs under it as it would have run alone.
func tetherArgs(imageEntrypoint []string) []string {
	return append([]string{tetherTarget, tether.Flag}, imageEntrypoint...)
}

// tetherMissing is why a call whose container exited without its
// tether's Hello failed: the tether never ran, so nothing of the command
// did (and the sandbox runs the call again without it).
type tetherMissing struct {
	code   int
	stderr string
}

func (e *tetherMissing) Error() string {
	return fmt.Sprintf("the container exited (%d) before its tether %s ran: %q", e.code, tetherTarget, e.stderr)
}

// helloFilter strips the tether's Hello from the start of a container's
// stderr and passes the rest on. A stderr that does not start with it is
// not the command's (the tether never ran): it is kept, up to a limit,
// for the error, and nothing is passed on.
type helloFilter struct {
	mu    sync.Mutex
	next  io.Writer
	held  []byte
	state helloState
}

type helloState int

const (
	helloWaiting helloState = iota
	helloSeen
	helloMissing
)

// heldMax bounds what a filter keeps of a stderr without Hello.
const heldMax = 4096

func newHelloFilter(next io.Writer) *helloFilter { return &helloFilter{next: next} }

func (f *helloFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.state {
	case helloSeen:
		return f.next.Write(p)
	case helloMissing:
		f.keep(p)
		return len(p), nil
	}
	f.held = append(f.held, p...)
	n := min(len(f.held), len(tether.Hello))
	switch {
	case string(f.held[:n]) != tether.Hello[:n]:
		f.state = helloMissing
		held := f.held
		f.held = nil
		f.keep(held)
	case n == len(tether.Hello):
		f.state = helloSeen
		rest := f.held[n:]
		f.held = nil
		if len(rest) > 0 {
			if _, err := f.next.Write(rest); err != nil {
				return 0, err
			}
		}
	}
	return len(p), nil
}

func (f *helloFilter) keep(p []byte) {
	if room := heldMax - len(f.held); room > 0 {
		f.held = append(f.held, p[:min(len(p), room)]...)
	}
}

// seen reports whether the tether's Hello came; when it did not, text is
// what came instead.
func (f *helloFilter) seen() (ok bool, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state == helloSeen, string(f.held)
}
