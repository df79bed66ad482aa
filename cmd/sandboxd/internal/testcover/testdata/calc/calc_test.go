package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add(1, 2) != 3")
	}
}

func TestAbs(t *testing.T) {
	if Abs(-2) != 2 {
		t.Fatal("Abs(-2) != 2")
	}
}

func TestAbsPositive(t *testing.T) {
	if Abs(3) != 3 {
		t.Fatal("Abs(3) != 3")
	}
}

func BenchmarkAdd(b *testing.B) {
	for b.Loop() {
		Add(1, 2)
	}
}
