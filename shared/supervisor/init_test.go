package supervisor

import "testing"

// TestInitRecords: a program is taken for one that can start itself
// again only once it has called Init, which returns in a process not
// started as a supervisor or a keeper.
func TestInitRecords(t *testing.T) {
	was := initialized.Swap(false)
	t.Cleanup(func() { initialized.Store(was) })
	if Initialized() {
		t.Fatal("Initialized before Init")
	}
	Init()
	if !Initialized() {
		t.Error("not Initialized after Init")
	}
}
