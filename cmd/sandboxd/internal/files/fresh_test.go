package files

import (
	"os"
	"testing"
)

func TestReadFresh(t *testing.T) {
	fx, l := readFixture(t, "a.go", "package a\n")
	data, err := fx.f.ReadFresh(l, "a.go")
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, string(data), "package a\n")

	_, err = fx.f.ReadFresh(NewLedger(), "a.go")
	wantErr(t, err, `edit "a.go": file has not been read in this session; Read it first`)

	fx.put(t, "a.go", "package b\n")
	_, err = fx.f.ReadFresh(l, "a.go")
	wantErr(t, err, `edit "a.go": file changed since it was read; Read it again`)

	_, err = fx.f.ReadFresh(l, "missing.go")
	wantErr(t, err, `edit "missing.go": file does not exist`)

	_, err = fx.f.ReadFresh(l, "../outside/secret")
	wantErr(t, err, "outside the workspace")

	if err := os.Symlink(fx.secret, fx.path("link.go")); err != nil {
		t.Fatal(err)
	}
	_, err = fx.f.ReadFresh(l, "link.go")
	wantErr(t, err, "outside the workspace")

	fx.put(t, ".git/x.go", "package x\n")
	fx.read(t, l, ".git/x.go", 0, 0)
	_, err = fx.f.ReadFresh(l, ".git/x.go")
	wantErr(t, err, "inside a .git directory")
}
