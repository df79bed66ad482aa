package verify

import "testing"

// TestCargoTestStreamsInAnyOrder: cargo names each test binary on
// stderr and the binaries report on stdout; the two pipes reach the
// parser in no fixed order. A unit test that failed is the crate's even
// when cargo's "Doc-tests" line was read before it.
func TestCargoTestStreamsInAnyOrder(t *testing.T) {
	p := newCargoParser(true)()
	feed(p, Stderr, "     Running unittests src/lib.rs (target/debug/deps/calc-0a1b2c)\n      Doc-tests calc\n")
	feed(p, Stdout, "\nrunning 2 tests\ntest tests::adds ... ok\ntest tests::subtracts ... FAILED\n\nfailures:\n\n"+
		"---- tests::subtracts stdout ----\nthread 'tests::subtracts' panicked at src/lib.rs:26:9:\nassertion failed\n\n"+
		"test result: FAILED. 1 passed; 1 failed; 0 ignored\n\nrunning 1 test\ntest src/lib.rs - add (line 3) ... FAILED\n")
	out := p.Finish(101)
	if len(out.Findings) != 2 {
		t.Fatalf("findings %v", strs(out.Findings))
	}
	if got := out.Findings[0]; got.Package != "calc" || got.Test != "tests::subtracts" || got.Line != 26 {
		t.Errorf("unit test finding %+v; want package calc", got)
	}
	if got := out.Findings[1]; got.Package != "calc (doc)" || got.Test != "src/lib.rs - add (line 3)" {
		t.Errorf("doc test finding %+v; want package calc (doc)", got)
	}
}
