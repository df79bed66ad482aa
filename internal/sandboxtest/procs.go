package sandboxtest

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
)

// Proc is a running process that carries a marker argument.
type Proc struct {
	proctest.ID
	// Args is its command line.
	Args []string
	// Container is the ID of the Docker container the process runs in,
	// as its cgroup names it; empty for a process of the host.
	Container string
}

func (p Proc) String() string {
	s := strconv.Itoa(p.PID) + " " + strings.Join(p.Args, " ")
	if p.Container != "" {
		s += " (container " + p.Container[:12] + ")"
	}
	return s
}

// HostProcs lists the running processes (zombies excluded) with an
// argument equal to marker, through the host's /proc. Processes in Docker
// containers and pods of the loopback cluster (containers too) run on the
// same kernel and show there under their host PIDs, so this one scan
// finds what any local backend started.
func HostProcs(marker string) ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	want := []byte(marker)
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !hasArg(cmdline, want) {
			continue
		}
		_, state, start, ok := proctest.Stat(pid)
		if !ok || state == 'Z' || state == 'X' {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		cgroup, _ := os.ReadFile("/proc/" + e.Name() + "/cgroup")
		out = append(out, Proc{ID: proctest.ID{PID: pid, Start: start}, Args: args, Container: containerOf(cgroup)})
	}
	return out, nil
}

func hasArg(cmdline, arg []byte) bool {
	for _, a := range bytes.Split(cmdline, []byte{0}) {
		if bytes.Equal(a, arg) {
			return true
		}
	}
	return false
}

// dockerCgroup finds a container ID in a cgroup path, as the cgroupfs
// driver ("/docker/ID") and the systemd driver ("docker-ID.scope") write
// it.
var dockerCgroup = regexp.MustCompile(`docker[/-]([0-9a-f]{64})`)

func containerOf(cgroup []byte) string {
	if m := dockerCgroup.FindSubmatch(cgroup); m != nil {
		return string(m[1])
	}
	return ""
}

// killProcs SIGKILLs whatever of procs still runs: the cleanup of a case
// that failed, so a survivor does not sleep on for years.
func killProcs(procs []Proc) {
	for _, p := range procs {
		if p.Running() {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
}

// NewMarker returns a number no other call uses, as the argument that
// marks a call's processes: nine digits, so that a sleep for that many
// seconds lasts years and no marker is a substring of another.
func NewMarker() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(100_000_000+binary.LittleEndian.Uint64(b[:])%900_000_000, 10)
}

// randHex is twelve random hex digits, for names no other test uses.
func randHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
