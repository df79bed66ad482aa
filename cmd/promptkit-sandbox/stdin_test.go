package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSpawnStdinDevices: a character device that is no terminal is read
// like a pipe. /dev/zero never ends: it is read to --max-input and
// refused, exit 2, without reading on; /dev/null is empty input. A real
// terminal (a pty) is still not read, so an interactive spawn does not
// wait for EOF.
func TestSpawnStdinDevices(t *testing.T) {
	cfg := writeConfig(t, shortTempDir(t), directConfig)
	tty := openPty(t)
	for _, cmd := range []string{"spawn", "exec"} {
		t.Run(cmd, func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				stdin  func() *os.File
				code   int
				stdout string
				stderr string
			}{
				{"/dev/zero", openDev(t, "/dev/zero"), exitUsage, "",
					"promptkit-sandbox: " + cmd + ": read stdin: stdin is larger than 1 MiB (raise the limit with --max-input)\n"},
				{"/dev/urandom", openDev(t, "/dev/urandom"), exitUsage, "",
					"promptkit-sandbox: " + cmd + ": read stdin: stdin is larger than 1 MiB (raise the limit with --max-input)\n"},
				{"/dev/null", openDev(t, "/dev/null"), 0, "0\n", ""},
				{"a terminal", func() *os.File { return tty }, 0, "0\n", ""},
			} {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				args := []string{cmd, "--config", cfg, "--sandbox", "host", "--max-input", "1m", "--", "sh", "-c", "wc -c | tr -d ' '"}
				c := exec.CommandContext(ctx, cliBinary(t), args...)
				c.Env = append(os.Environ(), isolated(t)...)
				c.Stdin = tc.stdin()
				var stdout, stderr bytes.Buffer
				c.Stdout, c.Stderr = &stdout, &stderr
				start := time.Now()
				err := c.Run()
				took := time.Since(start)
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if code != tc.code || stdout.String() != tc.stdout || stderr.String() != tc.stderr {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.name, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
				}
				if took > 10*time.Second {
					t.Errorf("%s: took %s", tc.name, took)
				}
			}
		})
	}
}

func openDev(t *testing.T, path string) func() *os.File {
	return func() *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
}

// openPty opens a pseudo-terminal and returns its terminal end.
func openPty(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	tty, err := os.OpenFile(filepath.Join("/dev/pts", strconv.Itoa(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}
