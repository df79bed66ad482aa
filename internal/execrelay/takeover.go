package execrelay

import (
	"os"
	"time"
)

// Attempt is what the takeover found when a serve did not take the
// call: main reads it rather than trying the same socket again. It is
// nil where no takeover was tried (not an exec, or a program that does
// not run the takeover).
type Attempt struct {
	Socket   string
	Explicit bool
	Result   Result
	Start    time.Time
}

// Tried is the takeover's Attempt, if any.
var Tried *Attempt

// Prog is argv[0] of the messages exec writes itself.
const Prog = "promptkit-sandbox: exec"

// init takes `promptkit-sandbox exec` over: through a serve, it runs the
// call and exits; otherwise it leaves the process to main.
func init() {
	if len(os.Args) < 2 || os.Args[1] != "exec" {
		return
	}
	start := time.Now()
	args := os.Args[2:]
	path, explicit := Socket(socketFlag(args), os.Getenv)
	dir, err := os.Getwd()
	if err != nil {
		return
	}
	c := &Call{
		Socket: path,
		Request: Request{
			Args:          args,
			Dir:           dir,
			Env:           os.Environ(),
			StdinTerminal: IsTerminal(0),
		},
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Prog:   Prog,
		Start:  start,
	}
	res := c.Run()
	if res.Handled {
		os.Exit(res.Code)
	}
	Tried = &Attempt{Socket: path, Explicit: explicit, Result: res, Start: start}
}

// socketFlag is the value of exec's --socket in args, as the flag
// package would parse it: flags up to the first argument that is not
// one, or "--"; every flag of exec but -h takes a value. The serve parses the
// arguments again, and its reading is the one that counts; this one
// only picks the serve to ask.
func socketFlag(args []string) string {
	socket := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break
		}
		name := a[1:]
		if name[0] == '-' {
			name = name[1:]
		}
		if name == "h" || name == "help" {
			continue
		}
		value, inline := "", false
		for j := 0; j < len(name); j++ {
			if name[j] == '=' {
				name, value, inline = name[:j], name[j+1:], true
				break
			}
		}
		if !inline {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		if name == "socket" {
			socket = value
		}
	}
	return socket
}
