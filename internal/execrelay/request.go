package execrelay

import (
	"errors"
	"time"
)

// Request is what exec sends: all the serve needs to run exec's call
// as exec itself would.
type Request struct {
	// Args are exec's arguments, after "exec".
	Args []string
	// Dir is exec's working directory, which a relative --config is
	// relative to.
	Dir string
	// Env is exec's environment: --env KEY forwards exec's value of KEY,
	// not the serve's.
	Env []string
	// StdinTerminal says exec's stdin is a terminal, which is not read
	// (an interactive exec does not sit waiting for end of file).
	StdinTerminal bool
}

// Lookup is a Request's environment as os.LookupEnv is the process's:
// the last entry of key wins, as in a process's environment.
func (r Request) Lookup(key string) (string, bool) {
	for i := len(r.Env) - 1; i >= 0; i-- {
		e := r.Env[i]
		if len(e) > len(key) && e[len(key)] == '=' && e[:len(key)] == key {
			return e[len(key)+1:], true
		}
	}
	return "", false
}

// errBadRequest is a Request frame that does not decode.
var errBadRequest = errors.New("malformed relay request")

// marshal is r as a Request frame's payload: the arguments, the
// directory, the environment, each string length-prefixed, the lists
// count-prefixed, and a flags byte.
func (r Request) marshal() []byte {
	n := 4 + 4 + len(r.Dir) + 4 + 1
	for _, s := range r.Args {
		n += 4 + len(s)
	}
	for _, s := range r.Env {
		n += 4 + len(s)
	}
	b := make([]byte, 0, n)
	b = appendStrings(b, r.Args)
	b = appendString(b, r.Dir)
	b = appendStrings(b, r.Env)
	var flags byte
	if r.StdinTerminal {
		flags |= 1
	}
	return append(b, flags)
}

// ParseRequest decodes a Request frame's payload.
func ParseRequest(b []byte) (Request, error) {
	var r Request
	var ok bool
	if r.Args, b, ok = takeStrings(b); !ok {
		return Request{}, errBadRequest
	}
	if r.Dir, b, ok = takeString(b); !ok {
		return Request{}, errBadRequest
	}
	if r.Env, b, ok = takeStrings(b); !ok {
		return Request{}, errBadRequest
	}
	if len(b) != 1 || b[0]&^1 != 0 {
		return Request{}, errBadRequest
	}
	r.StdinTerminal = b[0]&1 != 0
	return r, nil
}

// Accept is the serve's word that the call runs, with what exec needs
// should the serve stop answering mid-call.
type Accept struct {
	// Command is the command, for exec's messages.
	Command string
	// Timeout is the call's --timeout; zero when none was given.
	Timeout time.Duration
	// AnswerBy is how long after the Accept exec waits for the Exit
	// (the call's deadline and the allowance past it for the serve's
	// report); zero for no bound but the serve's heartbeats.
	AnswerBy time.Duration
}

// maxAcceptCommand bounds the command an Accept quotes.
const maxAcceptCommand = 1 << 10

// Marshal is a as an Accept frame's payload.
func (a Accept) Marshal() []byte {
	cmd := a.Command
	if len(cmd) > maxAcceptCommand {
		cmd = cmd[:maxAcceptCommand]
	}
	b := make([]byte, 0, 16+4+len(cmd))
	b = appendUint64(b, uint64(a.Timeout))  // #nosec G115 -- a duration, never negative, as 64 bits
	b = appendUint64(b, uint64(a.AnswerBy)) // #nosec G115 -- a duration, never negative, as 64 bits
	return appendString(b, cmd)
}

func parseAccept(b []byte) (Accept, bool) {
	if len(b) < 16 {
		return Accept{}, false
	}
	a := Accept{Timeout: time.Duration(uint64At(b)), AnswerBy: time.Duration(uint64At(b[8:]))} // #nosec G115 -- 64 wire bits back into a duration; a negative one is refused below
	cmd, rest, ok := takeString(b[16:])
	if !ok || len(rest) != 0 || a.Timeout < 0 || a.AnswerBy < 0 {
		return Accept{}, false
	}
	a.Command = cmd
	return a, true
}

func appendString(b []byte, s string) []byte {
	var n [4]byte
	putUint32(n[:], uint32(len(s))) // #nosec G115 -- a string of exec's arguments or environment: far under 4 GiB
	return append(append(b, n[:]...), s...)
}

func appendStrings(b []byte, ss []string) []byte {
	var n [4]byte
	putUint32(n[:], uint32(len(ss))) // #nosec G115 -- a count of exec's arguments or environment: far under 4 GiB
	b = append(b, n[:]...)
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

func takeString(b []byte) (string, []byte, bool) {
	if len(b) < 4 {
		return "", nil, false
	}
	n := uint64(uint32At(b))
	if n > uint64(len(b)-4) { // #nosec G115 -- len(b) >= 4 here
		return "", nil, false
	}
	return string(b[4 : 4+n]), b[4+n:], true
}

func takeStrings(b []byte) ([]string, []byte, bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := uint64(uint32At(b))
	b = b[4:]
	// Each string takes at least its four-byte length: a count beyond
	// that is a lie, refused before anything is allocated for it.
	if n > uint64(len(b)/4) {
		return nil, nil, false
	}
	ss := make([]string, 0, n)
	for range n {
		var s string
		var ok bool
		if s, b, ok = takeString(b); !ok {
			return nil, nil, false
		}
		ss = append(ss, s)
	}
	return ss, b, true
}

func appendUint64(b []byte, v uint64) []byte {
	return append(b, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v)) // #nosec G115 -- big-endian bytes: each takes its 8 bits
}

func uint64At(b []byte) uint64 {
	return uint64(uint32At(b))<<32 | uint64(uint32At(b[4:]))
}
