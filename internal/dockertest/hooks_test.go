package dockertest

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

func TestHooks(t *testing.T) {
	image := Image(t, Hooks)
	t.Run("echo round-trips stdin", func(t *testing.T) {
		t.Parallel()
		in := []byte("hello\nworld\x00\xff\xfe no newline at the end")
		res := runIn(t, image, in, nil, "/hooks/echo")
		if res.code != 0 || !bytes.Equal([]byte(res.stdout), in) {
			t.Errorf("echo: exit %d, stdout %q, stderr %q; want exit 0 and stdout %q", res.code, res.stdout, res.stderr, in)
		}
	})
	t.Run("envdump shows -e and is sorted", func(t *testing.T) {
		t.Parallel()
		res := runIn(t, image, nil, []string{"-e", "PROMPTKIT_TEST=a value=with equals", "-e", "AAA=1"}, "/hooks/envdump")
		lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
		if res.code != 0 || !contains(lines, "PROMPTKIT_TEST=a value=with equals") || !contains(lines, "AAA=1") {
			t.Errorf("envdump: exit %d, stdout %q, stderr %q; want both -e variables", res.code, res.stdout, res.stderr)
		}
		for i := 1; i < len(lines); i++ {
			if lines[i-1] > lines[i] {
				t.Errorf("envdump output not sorted: %q before %q", lines[i-1], lines[i])
			}
		}
	})
	t.Run("exitcode 7", func(t *testing.T) {
		t.Parallel()
		if res := runIn(t, image, nil, nil, "/hooks/exitcode", "7"); res.code != 7 {
			t.Errorf("exitcode 7: exit %d, stderr %q", res.code, res.stderr)
		}
	})
	t.Run("flood stdout", func(t *testing.T) {
		t.Parallel()
		res := runIn(t, image, nil, nil, "/hooks/flood", "1000")
		if res.code != 0 || res.stdout != string(FloodStdout(1000)) || res.stderr != "" {
			t.Errorf("flood 1000: exit %d, %d bytes of stdout (want 1000 of the pattern), stderr %q", res.code, len(res.stdout), res.stderr)
		}
	})
	t.Run("flood both streams", func(t *testing.T) {
		t.Parallel()
		const big = 3<<20 + 5 // more than a pipe buffer and not a multiple of a chunk
		res := runIn(t, image, nil, nil, "/hooks/flood", "10", strconv.Itoa(big))
		if res.code != 0 || res.stdout != string(FloodStdout(10)) || res.stderr != string(FloodStderr(big)) {
			t.Errorf("flood 10 %d: exit %d, stdout %q, %d bytes of stderr (want %d of the pattern)", big, res.code, res.stdout, len(res.stderr), big)
		}
	})
	t.Run("sleep prints its pid", func(t *testing.T) {
		t.Parallel()
		res := runIn(t, image, nil, nil, "/hooks/sleep", "100ms")
		pid, err := strconv.Atoi(strings.TrimSpace(res.stdout))
		if res.code != 0 || err != nil || pid <= 0 {
			t.Errorf("sleep 100ms: exit %d, stdout %q, stderr %q; want exit 0 and a pid", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("verdict", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct {
			stdin, stdout string
			code          int
		}{
			{stdin: `{"hook":"provider","phase":"before_call","request":{"ProviderID":"openai"}}`, stdout: "{\"allow\": true}\n"},
			{stdin: `{"hook":"tool","phase":"before_execution","request":{"Args":"deny-me"}}`, stdout: "{\"allow\": false, \"reason\": \"request contains deny-me\"}\n"},
			{stdin: `not json`, code: 2},
		} {
			res := runIn(t, image, []byte(tt.stdin), nil, "/hooks/verdict")
			if res.code != tt.code || res.stdout != tt.stdout {
				t.Errorf("verdict <<< %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q", tt.stdin, res.code, res.stdout, res.stderr, tt.code, tt.stdout)
			}
			if tt.code != 0 && !strings.Contains(res.stderr, "not a JSON hook request") {
				t.Errorf("verdict <<< %s: stderr %q does not say why", tt.stdin, res.stderr)
			}
		}
	})
}

func TestBusybox(t *testing.T) {
	image := Image(t, Busybox)
	t.Run("sh -c", func(t *testing.T) {
		t.Parallel()
		if res := runIn(t, image, nil, nil, "sh", "-c", "echo hi"); res.code != 0 || res.stdout != "hi\n" {
			t.Errorf("sh -c 'echo hi': exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("applets", func(t *testing.T) {
		t.Parallel()
		script := "for a in sh cat sleep env echo head tr kill ps wc; do command -v $a || echo missing $a; done"
		res := runIn(t, image, nil, nil, "sh", "-c", script)
		if res.code != 0 || strings.Contains(res.stdout, "missing") {
			t.Errorf("applets: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("pipes and /tmp", func(t *testing.T) {
		t.Parallel()
		res := runIn(t, image, []byte("a\nb\nc\n"), nil, "sh", "-c", "tr a-z A-Z > /tmp/x && head -n 2 /tmp/x | wc -l")
		if res.code != 0 || strings.TrimSpace(res.stdout) != "2" {
			t.Errorf("pipeline: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("user nobody", func(t *testing.T) {
		t.Parallel()
		if res := runIn(t, image, nil, []string{"--user", "nobody"}, "id", "-un"); res.code != 0 || res.stdout != "nobody\n" {
			t.Errorf("id -un as nobody: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
		}
	})
}

func contains(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}
