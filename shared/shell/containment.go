package shell

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"

	"github.com/altairalabs/promptkit-sandbox/shared/supervisor"
)

// ContainmentEnv names the environment variable that chooses how a
// process's descendants are contained (see the package documentation):
// "cgroup", "supervisor", "group", or empty for the best the host
// allows: a cgroup where the host can make one, else a supervisor (in a
// program that called supervisor.Init; else the group).
const ContainmentEnv = "PROMPTKIT_SANDBOX_CONTAINMENT"

// Containment is a way of holding everything a command starts.
type Containment string

const (
	// ContainCgroup runs each call in a cgroup v2 of its own, killed with
	// cgroup.kill: cheap, and nothing escapes it but a process with the
	// rights to move itself to another cgroup. A keeper process kills
	// the calls of a host that died.
	ContainCgroup Containment = "cgroup"
	// ContainSupervisor runs each call under a supervisor, a second
	// start of the host's binary that is a child subreaper: it works
	// with no privilege at all, and costs that start, each call.
	ContainSupervisor Containment = "supervisor"
	// ContainGroup kills the call's process group only: what leaves the
	// group (setsid, a daemon's double fork) survives the call.
	ContainGroup Containment = "group"
)

// errNoInit is why a program that did not call supervisor.Init has its
// commands contained by process group alone.
var errNoInit = errors.New("this program did not call supervisor.Init (promptkit.Init in a PromptKit program) " +
	"first thing in main, so it may not start itself as a cgroup's keeper or a supervisor")

// noInitOnce says errNoInit once per process, at the first call it
// weakens.
var noInitOnce sync.Once

// containment is what a Start uses: opts' choice, else the environment's.
func (o Options) containment() (Containment, error) {
	if o.Uncontained {
		return ContainGroup, nil
	}
	switch c := Containment(os.Getenv(ContainmentEnv)); c {
	case "", "auto":
		return "", nil
	case ContainCgroup, ContainSupervisor, ContainGroup:
		return c, nil
	default:
		return "", fmt.Errorf("%s=%q: want cgroup, supervisor, group or nothing", ContainmentEnv, c)
	}
}

// contain sets cmd up to run contained, as opts and the host allow, and
// returns the files that are the child's ends, to close once it started.
func (p *Process) contain(cmd *exec.Cmd) ([]*os.File, error) {
	mode, err := p.opts.containment()
	if err != nil {
		return nil, err
	}
	if mode == ContainGroup {
		return nil, nil
	}
	if !supervisor.Initialized() {
		// Both ways need this binary started again, as the supervisor
		// or as the cgroup keeper, which only a program that called
		// supervisor.Init can be.
		if mode != "" {
			return nil, fmt.Errorf("%s=%s: %w", ContainmentEnv, mode, errNoInit)
		}
		noInitOnce.Do(func() {
			slog.Warn("promptkit-sandbox: commands are contained by their process group only: " + errNoInit.Error())
		})
		return nil, nil
	}
	if mode == "" || mode == ContainCgroup {
		cg, err := newCallCgroup()
		switch {
		case err == nil:
			p.cg = cg
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = int(cg.fd.Fd())
			return nil, nil
		case mode == ContainCgroup:
			return nil, fmt.Errorf("%s=%s: %w", ContainmentEnv, mode, err)
		}
	}
	sup, ends, err := superviseCmd(cmd)
	if err != nil {
		return nil, err
	}
	p.sup = sup
	return ends, nil
}

// release gives back what contain took, for a start that failed.
func (p *Process) release() {
	if p.sup != nil {
		_ = p.sup.ctl.Close()
		_ = p.sup.status.Close()
	}
	if p.cg != nil {
		p.cg.release()
	}
}
