package dockerbox

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// residentBinary is the file installed in containers as the resident: the
// plugin's own executable, which runs as the resident when started with
// resident.Flag. Tests, whose binary is not static, point it at a static
// build of the plugin.
var residentBinary = os.Executable

// residentImage is the resident's file, checked and hashed once.
type residentImage struct {
	path string
	size int64
	sum  string // SHA-256, hex
}

var (
	residentOnce sync.Once
	residentImg  residentImage
	residentErr  error
)

func loadResidentImage() (residentImage, error) {
	residentOnce.Do(func() { residentImg, residentErr = inspectResident() })
	return residentImg, residentErr
}

// elfMachine is the ELF machine of each architecture the resident can be
// installed for: the plugin's own.
var elfMachine = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"386":     elf.EM_386,
	"arm":     elf.EM_ARM,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"riscv64": elf.EM_RISCV,
}

// inspectResident checks that the binary can run in any container of the
// plugin's architecture (a static ELF: containers need not have a C
// library) and hashes it.
func inspectResident() (residentImage, error) {
	path, err := residentBinary()
	if err != nil {
		return residentImage{}, fmt.Errorf("find the plugin's executable: %w", err)
	}
	ef, err := elf.Open(path)
	if err != nil {
		return residentImage{}, fmt.Errorf("read %s: %w", path, err)
	}
	defer ef.Close()
	if want, ok := elfMachine[runtime.GOARCH]; !ok || ef.Machine != want {
		return residentImage{}, fmt.Errorf("%s is for %s, not %s", path, ef.Machine, runtime.GOARCH)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			return residentImage{}, fmt.Errorf("%s is dynamically linked (build it with CGO_ENABLED=0, as make build does)", path)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return residentImage{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return residentImage{}, fmt.Errorf("hash %s: %w", path, err)
	}
	return residentImage{path: path, size: n, sum: hex.EncodeToString(h.Sum(nil))}, nil
}
