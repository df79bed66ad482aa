package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestSleepIdentifiedKilledGone(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	ids := Identify(t, cmd.Process.Pid)
	if !ids[0].Running() || !Alive(cmd.Process.Pid) {
		t.Fatalf("%v is not running", ids[0])
	}
	if comm, _, _, ok := Stat(cmd.Process.Pid); !ok || comm != "sleep" {
		t.Errorf("Stat: comm %q, ok %v", comm, ok)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Unreaped, the process is a zombie, which counts as gone.
	AssertGone(t, ids...)
	AssertCommGone(t, cmd.Process.Pid, "sleep")
	Gone(t, "the killed sleep", cmd.Process.Pid)
	_ = cmd.Wait()
	if ids[0].Running() {
		t.Errorf("%v still running after Wait", ids[0])
	}
}

func TestParseStat(t *testing.T) {
	line := "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 12345 1000 100\n"
	comm, state, start, ok := parseStat([]byte(line))
	if !ok || comm != "a) b (c)" || state != 'S' || start != "12345" {
		t.Errorf("parseStat = %q %q %q %v", comm, state, start, ok)
	}
	for _, bad := range []string{"", "42 (x", "42 x) S", "42 (x) S 1"} {
		if _, _, _, ok := parseStat([]byte(bad)); ok {
			t.Errorf("parseStat(%q) ok", bad)
		}
	}
}

func TestReadPIDs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pids")
	if err := os.WriteFile(file, []byte("1\n2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	WaitFile(t, file)
	if got := ReadPIDs(t, file, 3); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Errorf("ReadPIDs = %v", got)
	}
}
