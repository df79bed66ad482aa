package execrelay

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestRequestRoundTrip(t *testing.T) {
	for _, r := range []Request{
		{},
		{Args: []string{"--config", "c.yaml", "--", "sh", "-c", "echo ''"}, Dir: "/w", Env: []string{"A=1", "B="}, StdinTerminal: true},
		{Args: []string{""}, Env: []string{"X=\x00\xff"}},
	} {
		got, err := ParseRequest(r.marshal())
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		if !slices.Equal(got.Args, r.Args) || got.Dir != r.Dir || !slices.Equal(got.Env, r.Env) || got.StdinTerminal != r.StdinTerminal {
			t.Errorf("round trip of %+v gave %+v", r, got)
		}
	}
}

func TestParseRequestRefusesWhatDoesNotDecode(t *testing.T) {
	good := Request{Args: []string{"a", "bc"}, Dir: "/d", Env: []string{"K=V"}}.marshal()
	for i := range len(good) {
		if _, err := ParseRequest(good[:i]); err == nil {
			t.Errorf("a request cut at %d bytes decoded", i)
		}
	}
	if _, err := ParseRequest(append(slices.Clone(good), 0)); err == nil {
		t.Error("a request with a byte too many decoded")
	}
	// A count of a billion strings in a few bytes is refused before
	// anything is allocated for it.
	if _, err := ParseRequest([]byte{0x40, 0, 0, 0, 0, 0, 0, 0}); err == nil {
		t.Error("a count beyond the payload decoded")
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add(Request{Args: []string{"x"}, Dir: "/", Env: []string{"A=b"}}.marshal())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRequest(b)
		if err == nil && !bytes.Equal(r.marshal(), b) {
			t.Errorf("%q decoded to %+v, which encodes otherwise", b, r)
		}
	})
}

func TestAcceptRoundTrip(t *testing.T) {
	a := Accept{Command: "sh", Timeout: 2 * time.Second, AnswerBy: 3 * time.Second}
	got, ok := parseAccept(a.Marshal())
	if !ok || got != a {
		t.Errorf("got %+v %v, want %+v", got, ok, a)
	}
	long := Accept{Command: string(bytes.Repeat([]byte("c"), 5000))}
	if got, ok := parseAccept(long.Marshal()); !ok || len(got.Command) != maxAcceptCommand {
		t.Errorf("a long command: %v, %d bytes", ok, len(got.Command))
	}
}

func TestFramesRoundTrip(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	big := bytes.Repeat([]byte("x"), 2*MaxChunk+7)
	if _, err := w.Stream(FrameStdout).Write(big); err != nil {
		t.Fatal(err)
	}
	if err := w.Exit(-3); err != nil {
		t.Fatal(err)
	}
	var got []byte
	var buf []byte
	for {
		typ, payload, grown, err := ReadFrame(&b, buf)
		if err != nil {
			t.Fatal(err)
		}
		buf = grown
		if typ == FrameExit {
			if code, ok := ExitCode(payload); !ok || code != -3 {
				t.Errorf("exit %d %v", code, ok)
			}
			break
		}
		if typ != FrameStdout || len(payload) > MaxChunk {
			t.Fatalf("frame %q of %d bytes", typ, len(payload))
		}
		got = append(got, payload...)
	}
	if !bytes.Equal(got, big) {
		t.Errorf("streamed %d bytes, read back %d", len(big), len(got))
	}
	if _, _, _, err := ReadFrame(&b, nil); err != io.EOF {
		t.Errorf("after the last frame: %v", err)
	}
}

func TestReadFrameRefusesOversizedFrames(t *testing.T) {
	for _, h := range [][]byte{
		{FrameStdout, 0, 1, 0, 0},     // a chunk over MaxChunk
		{FrameRequest, 0x7f, 0, 0, 0}, // a request over maxRequest
	} {
		if _, _, _, err := ReadFrame(bytes.NewReader(h), nil); !errors.Is(err, ErrFrameTooLarge) {
			t.Errorf("header %v: %v, want ErrFrameTooLarge", h, err)
		}
	}
	if _, _, _, err := ReadFrame(bytes.NewReader([]byte{FrameStdout, 0, 0, 0, 9, 'a'}), nil); err != io.ErrUnexpectedEOF {
		t.Errorf("a cut frame: %v", err)
	}
}

func TestSocketFlagReadsAsTheFlagPackage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--socket", "/s", "--", "cat"}, "/s"},
		{[]string{"-socket=/s", "cat"}, "/s"},
		{[]string{"--config", "c", "--socket=/a", "--socket", "/b"}, "/b"},
		{[]string{"--env", "--socket", "--", "cat"}, ""},
		{[]string{"--config", "c", "cat", "--socket", "/s"}, ""},
		{[]string{"--", "--socket", "/s"}, ""},
		{[]string{"-h", "--socket", "/s"}, "/s"},
		{[]string{"--socket"}, ""},
	} {
		if got := socketFlag(tc.args); got != tc.want {
			t.Errorf("socketFlag(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestSocketPrecedence(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	want := "/tmp/promptkit-sandbox-" + strconv.Itoa(os.Getuid()) + "/serve.sock"
	if p, explicit := Socket("", getenv); p != want || explicit {
		t.Errorf("no flag, no env: %q %v, want %q", p, explicit, want)
	}
	env["XDG_RUNTIME_DIR"] = "/run/user/7/"
	if p, _ := Socket("", getenv); p != "/run/user/7/promptkit-sandbox/serve.sock" {
		t.Errorf("XDG_RUNTIME_DIR: %q", p)
	}
	env["XDG_RUNTIME_DIR"] = "relative"
	if p, _ := Socket("", getenv); p != want {
		t.Errorf("a relative XDG_RUNTIME_DIR: %q, want %q", p, want)
	}
	env[EnvSocket] = "/e.sock"
	if p, explicit := Socket("", getenv); p != "/e.sock" || !explicit {
		t.Errorf("env: %q %v", p, explicit)
	}
	if p, explicit := Socket("/f.sock", getenv); p != "/f.sock" || !explicit {
		t.Errorf("flag: %q %v", p, explicit)
	}
}

func TestLookupTakesTheLastEntry(t *testing.T) {
	r := Request{Env: []string{"A=1", "AB=2", "A=3", "B"}}
	for key, want := range map[string]string{"A": "3", "AB": "2"} {
		if v, ok := r.Lookup(key); !ok || v != want {
			t.Errorf("Lookup(%q) = %q %v, want %q", key, v, ok, want)
		}
	}
	if _, ok := r.Lookup("B"); ok {
		t.Error("an entry without '=' was found")
	}
}

func TestQuoteAndItoa(t *testing.T) {
	for s, want := range map[string]string{`a"b\c`: `"a\"b\\c"`, "x\n\x7f": `"x\x0a\x7f"`, "": `""`, "héllo": `"héllo"`} {
		if got := quote(s); got != want {
			t.Errorf("quote(%q) = %s, want %s", s, got, want)
		}
	}
	for _, n := range []int{0, 7, -12, 1 << 40} {
		if got := itoa(n); got != strconv.Itoa(n) {
			t.Errorf("itoa(%d) = %q", n, got)
		}
	}
}

// TestRunWithNoServe: nothing listening, or a socket path of nothing, is
// ErrNoServe and not handled, with nothing read or written.
func TestRunWithNoServe(t *testing.T) {
	dir := t.TempDir()
	stdin := bytes.NewReader([]byte("unread"))
	var out bytes.Buffer
	c := &Call{Socket: filepath.Join(dir, "none.sock"), Stdin: stdin, Stdout: &out, Stderr: &out, Prog: "p", Start: time.Now()}
	res := c.Run()
	if res.Handled || !errors.Is(res.Err, ErrNoServe) || res.Stalled() {
		t.Errorf("got %+v, want ErrNoServe, not handled", res)
	}
	if stdin.Len() != len("unread") || out.Len() != 0 {
		t.Errorf("read %d bytes of stdin, wrote %q", len("unread")-stdin.Len(), out.String())
	}
}
