package seal

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestWithoutTokenFlags(t *testing.T) {
	for in, want := range map[string]string{
		"--token x --workspace w":        "--workspace w",
		"--token=x --workspace w":        "--workspace w",
		"-token x -token-file f --stdio": "--stdio",
		"--token-file=f --addr a":        "--addr a",
		"---token x":                     "---token x",
		"--workspace w -- --token x":     "--workspace w -- --token x",
		"--tokens x":                     "--tokens x",
		"--workspace --token":            "--workspace --token",
		// A bool flag takes no value: the token after it goes.
		"--exit-on-stdin-eof --token x --stdio": "--exit-on-stdin-eof --stdio",
	} {
		if got := strings.Join(WithoutTokenFlags(strings.Fields(in)), " "); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// TestTokenFileInOwnGroup: a token file its group may read is taken when
// that group is sandboxd's own (a Kubernetes secret volume with fsGroup),
// and refused in another group.
func TestTokenFileInOwnGroup(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("a-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o440); err != nil {
		t.Fatal(err)
	}
	if tok, err := ReadToken(file); err != nil || tok != "a-token" {
		t.Fatalf("0440 in our own group: %q, %v", tok, err)
	}
	if err := os.Chown(file, -1, os.Getegid()+1); err != nil {
		t.Skipf("cannot give the file another group (not root?): %v", err)
	}
	if _, err := ReadToken(file); err == nil || !strings.Contains(err.Error(), "lets others read it") {
		t.Fatalf("0440 in another group: %v, want it refused", err)
	}
}

// TestSecretsOf: the seal reads the token, its file and the secrets'
// names as sandboxd's flag parsing does, and leaves alone a command line
// that parsing would refuse (a test binary's, the supervisor's).
func TestSecretsOf(t *testing.T) {
	env := map[string]string{"SANDBOXD_TOKEN": " env-token ", "SANDBOXD_SECRET_ENV": "A, B,,"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		args string
		want given
		ok   bool
	}{
		{"", given{token: "env-token", secretEnv: []string{"A", "B"}}, true},
		{"--token flag-token --secret-env C -secret-env=D", given{token: "flag-token", secretEnv: []string{"C", "D"}}, true},
		{"--token-file f --readonly --workspace --token", given{token: "env-token", tokenFile: "f", secretEnv: []string{"A", "B"}}, true},
		{"--stdio --token=x --", given{token: "x", secretEnv: []string{"A", "B"}}, true},
		{"--token x -- extra", given{}, false},
		{"--token x positional", given{}, false},
		{"-test.run=X --token y", given{}, false},
		{"/bin/bash bash -c true", given{}, false},
	} {
		got, ok := secretsOf(strings.Fields(c.args), getenv)
		if ok != c.ok || ok && (got.token != c.want.token || got.tokenFile != c.want.tokenFile || strings.Join(got.secretEnv, ",") != strings.Join(c.want.secretEnv, ",")) {
			t.Errorf("%q: got %+v, %v; want %+v, %v", c.args, got, ok, c.want, c.ok)
		}
	}
}

// TestSealedRoundTrip: what the seal writes, Unseal reads back.
func TestSealedRoundTrip(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "sealed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("SANDBOXD_TOKEN=t=1\x00MY_SECRET=a b\x00EMPTYISH="); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	getenv, err := Unseal(func(k string) string {
		if k == EnvSealed {
			return strconv.Itoa(fd)
		}
		return "outer-" + k
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"SANDBOXD_TOKEN": "t=1", "MY_SECRET": "a b", "EMPTYISH": "", "OTHER": "outer-OTHER"} {
		if got := getenv(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}
