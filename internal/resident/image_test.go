package resident

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
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
	if err != nil || img.Size != st.Size() || len(img.ID) != 64 || img.Name() != "resident-"+img.ID[:16] {
		t.Fatalf("static binary: %+v, %v", img, err)
	}
	// The fingerprint comes from the Go build ID, as the toolchain
	// reports it.
	out, err := exec.Command("go", "tool", "buildid", static).Output()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(static)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if got, want := goBuildID(ef), strings.TrimSpace(string(out)); got != want || got == "" {
		t.Fatalf("build ID %q, go tool buildid says %q", got, want)
	}
	// Another build is another fingerprint.
	other := filepath.Join(dir, "other")
	cmd = exec.Command("go", "build", "-ldflags", "-X main.greeting=other", "-o", other, "./testdata/hello")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if img2, err := InspectImage(other); err != nil || img2.ID == img.ID {
		t.Fatalf("a second build: %+v, %v (first %s)", img2, err, img.ID)
	}
	// Without a build ID the whole file is hashed.
	bare := filepath.Join(dir, "bare")
	cmd = exec.Command("go", "build", "-ldflags", "-buildid=", "-o", bare, "./testdata/hello")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bare)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if img3, err := InspectImage(bare); err != nil || img3.ID != hex.EncodeToString(sum[:]) {
		t.Fatalf("no build ID: %+v, %v; want the file's SHA-256", img3, err)
	}
	// /bin/sh on Debian is dynamically linked.
	if _, err := InspectImage("/bin/sh"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("/bin/sh: %v", err)
	}
	if _, err := InspectImage("/etc/passwd"); err == nil {
		t.Error("a text file passed")
	}
}
