package files

import "testing"

// TestApplyAllOrNone: a set of changes is checked whole before anything
// is written; once written, the session may Edit the files unread.
func TestApplyAllOrNone(t *testing.T) {
	fx := newFixture(t, Options{})
	fx.put(t, "a.go", "package a // Old\n")
	fx.put(t, "b.go", "package b // Old\n")
	fx.put(t, ".git/config", "[core]\n")
	l := NewLedger()

	stale := []Change{
		{Path: "a.go", Old: []byte("package a // Old\n"), New: []byte("package a // New\n")},
		{Path: "b.go", Old: []byte("package b // something else\n"), New: []byte("package b // New\n")},
	}
	wantErr(t, fx.f.Apply(l, stale), `edit "b.go"`, "changed while the change was computed; nothing was written")
	git := []Change{stale[0], {Path: ".git/config", Old: []byte("[core]\n"), New: []byte("[core]\n\tpager = x\n")}}
	wantErr(t, fx.f.Apply(l, git), ".git")
	missing := []Change{stale[0], {Path: "c.go", Old: nil, New: []byte("x")}}
	wantErr(t, fx.f.Apply(l, missing), "file does not exist")
	wantEqual(t, fx.content(t, "a.go"), "package a // Old\n")
	wantEqual(t, fx.content(t, ".git/config"), "[core]\n")

	good := []Change{stale[0], {Path: "b.go", Old: []byte("package b // Old\n"), New: []byte("package b // New\n")}}
	if err := fx.f.Apply(l, good); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, fx.content(t, "a.go"), "package a // New\n")
	wantEqual(t, fx.content(t, "b.go"), "package b // New\n")
	if _, err := fx.f.Edit(l, "b.go", "New", "Newer", false); err != nil {
		t.Fatalf("Edit after Apply, without a Read: %v", err)
	}
}
