package lockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-version"
)

var (
	sumA = strings.Repeat("a", 64)
	sumB = strings.Repeat("0123456789abcdef", 4)
	sumC = strings.Repeat("c", 64)
	sumD = strings.Repeat("d", 64)
)

func v(s string) *version.Version { return version.Must(version.NewVersion(s)) }

const golden = `{
  "version": 1,
  "plugins": [
    {
      "name": "docker",
      "version": "0.0.0",
      "sha256": "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
    },
    {
      "name": "docker",
      "version": "1.9.0",
      "sha256": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    },
    {
      "name": "docker",
      "version": "1.10.0-rc.1",
      "sha256": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    },
    {
      "name": "kubectl",
      "version": "2.0.0",
      "sha256": "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
    }
  ]
}
`

func TestWriteGoldenAndRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir)
	if path != filepath.Join(dir, "promptkit-sandbox.lock") {
		t.Fatalf("Path = %s", path)
	}
	l := &Lock{}
	l.Set("kubectl", v("2.0.0"), sumD)
	l.Set("docker", v("1.10.0-rc.1"), sumB)
	l.Set("docker", v("1.9.0"), sumB)
	l.Set("docker", v("v0.0.0"), sumC)
	l.Set("docker", v("1.9.0"), sumA) // replaces, does not add
	if err := Write(path, l); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != golden {
		t.Errorf("lock file:\n%s\nwant:\n%s", data, golden)
	}

	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, l) {
		t.Errorf("Read = %+v\nwant %+v", got, l)
	}
	if err := Write(path, got); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); string(again) != golden {
		t.Errorf("rewrite changed the file:\n%s", again)
	}
}

func TestWriteEmptyLock(t *testing.T) {
	path := Path(t.TempDir())
	if err := Write(path, &Lock{}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if want := "{\n  \"version\": 1,\n  \"plugins\": []\n}\n"; string(data) != want {
		t.Errorf("got %q, want %q", data, want)
	}
	l, err := Read(path)
	if err != nil || l == nil || len(l.Plugins) != 0 {
		t.Errorf("Read = %+v, %v; want an empty lock", l, err)
	}
}

func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir)
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &Lock{}
	l.Set("docker", v("1.0.0"), sumA)
	if err := Write(path, l); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != FileName {
		t.Errorf("directory holds %v, want only %s", entries, FileName)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode() != 0o644 {
		t.Errorf("mode = %s, want -rw-r--r--", info.Mode())
	}
}

func TestWriteFailureLeavesNoTempFile(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir)
	if err := os.Mkdir(path, 0o755); err != nil { // rename over a directory fails
		t.Fatal(err)
	}
	l := &Lock{}
	l.Set("docker", v("1.0.0"), sumA)
	err := Write(path, l)
	if err == nil || !strings.HasPrefix(err.Error(), "write lock file: rename ") {
		t.Fatalf("got %v, want a rename error", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != FileName || !entries[0].IsDir() {
		t.Errorf("directory holds %v, want only the directory %s", entries, FileName)
	}
}

func TestWriteRefusesInvalidLock(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir)
	if err := Write(path, nil); err == nil || err.Error() != "write lock file: no lock given" {
		t.Errorf("nil lock: got %v", err)
	}
	bad := &Lock{}
	bad.Set("docker", nil, sumA)
	want := "write lock file " + path + `: plugins[0] (docker): invalid version ""`
	if err := Write(path, bad); err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an invalid lock was written: %v", err)
	}
}

func TestReadMissingFile(t *testing.T) {
	l, err := Read(filepath.Join(t.TempDir(), FileName))
	if l != nil || err != nil {
		t.Errorf("Read(missing) = %v, %v; want nil, nil", l, err)
	}
}

func TestReadRejects(t *testing.T) {
	entry := func(name, ver, sum string) string {
		return `{"name": "` + name + `", "version": "` + ver + `", "sha256": "` + sum + `"}`
	}
	cases := []struct{ content, want string }{
		{`{`, `lock file $P is not valid JSON: unexpected end of JSON input`},
		{`{"version": 1, "plugins": []} trailing`, `lock file $P is not valid JSON: invalid character 't' after top-level value`},
		{`[]`, `lock file $P is not valid JSON: json: cannot unmarshal array into Go value of type struct { Version *int "json:\"version\"" }`},
		{`{"plugins": []}`, `lock file $P has no "version" field`},
		{`{"version": 2, "plugins": []}`, `lock file $P has format version 2; this build reads version 1 (upgrade promptkit-sandbox, or rerun promptkit-sandbox plugins lock)`},
		{`{"version": 1, "plugin": []}`, `lock file $P: json: unknown field "plugin"`},
		{`{"version": 1, "plugins": [{"name": "docker", "version": "1.0.0", "sha256": "` + sumA + `", "sha512": ""}]}`, `lock file $P: json: unknown field "sha512"`},
		{`{"version": 1, "plugins": [` + entry("", "1.0.0", sumA) + `]}`, `lock file $P: plugins[0]: missing name`},
		{`{"version": 1, "plugins": [` + entry("docker", "one", sumA) + `]}`, `lock file $P: plugins[0] (docker): invalid version "one"`},
		{`{"version": 1, "plugins": [` + entry("docker", "v1.0", sumA) + `]}`, `lock file $P: plugins[0] (docker): version "v1.0" is not canonical (write "1.0.0")`},
		{`{"version": 1, "plugins": [` + entry("docker", "1.0.0", strings.ToUpper(sumA)) + `]}`, `lock file $P: plugins[0] (docker 1.0.0): sha256 "` + strings.ToUpper(sumA) + `" is not 64 lowercase hex digits`},
		{`{"version": 1, "plugins": [` + entry("docker", "1.0.0", sumA[:63]) + `]}`, `lock file $P: plugins[0] (docker 1.0.0): sha256 "` + sumA[:63] + `" is not 64 lowercase hex digits`},
		{`{"version": 1, "plugins": [` + entry("docker", "1.0.0", sumA) + `, ` + entry("docker", "1.0.0", sumB) + `]}`, `lock file $P: plugins[1]: docker 1.0.0 is listed twice`},
	}
	for _, tc := range cases {
		path := filepath.Join(t.TempDir(), FileName)
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Read(path)
		want := strings.ReplaceAll(tc.want, "$P", path)
		if l != nil || err == nil || err.Error() != want {
			t.Errorf("%s:\ngot  %v, %v\nwant %s", tc.content, l, err, want)
		}
	}
}

func TestReadUnreadable(t *testing.T) {
	path := t.TempDir() // a directory: reading it fails, and not as "missing"
	_, err := Read(path)
	if want := "read lock file: " + path + " is not a regular file (a directory)"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestReadRefusesFIFO: a FIFO where the lock file should be is refused
// at once; reading it would wait for a writer that never comes.
func TestReadRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Read(path)
		done <- err
	}()
	select {
	case err := <-done:
		if want := "read lock file: " + path + " is not a regular file (a FIFO)"; err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	case <-time.After(5 * time.Second):
		// Unblock the reader so the test binary can end.
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			_ = f.Close()
		}
		t.Fatal("Read of a FIFO still blocked after 5s")
	}
}

func TestReadRefusesOversizedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, make([]byte, MaxSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(path)
	if want := fmt.Sprintf("read lock file: %s is larger than %d bytes", path, MaxSize); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestReadAcceptsHandWrittenLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	content := `{"plugins":[{"sha256":"` + sumA + `","version":"1.0.0","name":"docker"}],"version":1}`
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Entry{{Name: "docker", Version: "1.0.0", SHA256: sumA}}; !reflect.DeepEqual(l.Plugins, want) {
		t.Errorf("got %+v, want %+v", l.Plugins, want)
	}
}
