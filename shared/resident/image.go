package resident

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
)

// Image is a resident's executable, checked to run in any Linux container
// of the plugin's architecture and hashed (a backend names the installed
// copy by its hash, so it installs it once per container and build).
type Image struct {
	Path string
	Size int64
	Sum  string // SHA-256, hex
}

// Name is the installed file's name: resident- and 16 hex digits of the
// hash.
func (img Image) Name() string { return "resident-" + img.Sum[:16] }

// elfMachine is the ELF machine of each architecture a resident can be
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

// InspectImage checks that path is a static ELF executable for the
// plugin's architecture (containers need not have a C library) and hashes
// it.
func InspectImage(path string) (Image, error) {
	ef, err := elf.Open(path)
	if err != nil {
		return Image{}, fmt.Errorf("read %s: %w", path, err)
	}
	defer ef.Close()
	if want, ok := elfMachine[runtime.GOARCH]; !ok || ef.Machine != want {
		return Image{}, fmt.Errorf("%s is for %s, not %s", path, ef.Machine, runtime.GOARCH)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			return Image{}, fmt.Errorf("%s is dynamically linked (build it with CGO_ENABLED=0, as make build does)", path)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return Image{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Image{}, fmt.Errorf("hash %s: %w", path, err)
	}
	return Image{Path: path, Size: n, Sum: hex.EncodeToString(h.Sum(nil))}, nil
}
