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
// of the plugin's architecture and fingerprinted (a backend names the
// installed copy by its fingerprint, so it installs it once per container
// and build).
type Image struct {
	Path string
	Size int64
	// ID identifies the build, in 64 hex digits: a SHA-256 of its Go
	// build ID and size, or of the whole file when it has no build ID.
	ID string
}

// Name is the installed file's name: resident- and 16 hex digits of ID.
func (img Image) Name() string { return "resident-" + img.ID[:16] }

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
// plugin's architecture (containers need not have a C library) and
// fingerprints it.
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
	f, err := os.Open(path) // #nosec G304 -- the plugin's own executable, or the binary its caller names, already opened as ELF above
	if err != nil {
		return Image{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Image{}, err
	}
	h := sha256.New()
	// The Go build ID is the toolchain's own hash of the build, and one
	// note to read: hashing a plugin-sized file instead costs tens of
	// milliseconds at every plugin start.
	if id := goBuildID(ef); id != "" {
		fmt.Fprintf(h, "go build id %s size %d", id, st.Size())
		return Image{Path: path, Size: st.Size(), ID: hex.EncodeToString(h.Sum(nil))}, nil
	}
	n, err := io.Copy(h, f)
	if err != nil {
		return Image{}, fmt.Errorf("hash %s: %w", path, err)
	}
	return Image{Path: path, Size: n, ID: hex.EncodeToString(h.Sum(nil))}, nil
}

// goBuildNote is the ELF note type of the Go build ID, under owner "Go".
const goBuildNote = 4

// goBuildID returns the build ID the Go linker wrote into the
// .note.go.buildid section, or "" when there is none (a binary built by
// something else, or with -buildid=).
func goBuildID(ef *elf.File) string {
	sec := ef.Section(".note.go.buildid")
	if sec == nil || sec.Type != elf.SHT_NOTE {
		return ""
	}
	data, err := sec.Data()
	if err != nil || len(data) < 16 {
		return ""
	}
	bo := ef.ByteOrder
	nameSize, descSize, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
	// The name is "Go\x00" padded to 4 bytes; the description follows.
	// #nosec G115 -- len(data) >= 16, checked above
	if nameSize != 4 || typ != goBuildNote || string(data[12:16]) != "Go\x00\x00" || uint64(descSize) > uint64(len(data)-16) {
		return ""
	}
	return string(data[16 : 16+descSize])
}
