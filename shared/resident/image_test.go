package resident

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestInspectImage(t *testing.T) {
	dir := t.TempDir()
	static := filepath.Join(dir, "static")
	cmd := exec.Command("go", "build", "-o", static, "./testdata/hello")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	img, err := InspectImage(static)
	st, _ := os.Stat(static)
	if err != nil || img.Size != st.Size() || len(img.Sum) != 64 || img.Name() != "resident-"+img.Sum[:16] {
		t.Fatalf("static binary: %+v, %v", img, err)
	}
	// /bin/sh on Debian is dynamically linked.
	if _, err := InspectImage("/bin/sh"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("/bin/sh: %v", err)
	}
	if _, err := InspectImage("/etc/passwd"); err == nil {
		t.Error("a text file passed")
	}
}
