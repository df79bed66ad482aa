package shapes

import "testing"

func TestArea(t *testing.T) {
	if Area(2, 3) != 6 {
		t.Fatal("area of 2x3")
	}
}

func TestDouble(t *testing.T) {
	if Double(2, 3) != 13 {
		t.Fatal("double of 2x3")
	}
}
