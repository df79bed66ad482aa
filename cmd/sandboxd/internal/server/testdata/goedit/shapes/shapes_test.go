package shapes

import "testing"

func TestSquare(t *testing.T) {
	if got := Square(2).Area(); got != 4 {
		t.Fatalf("Square(2).Area() = %d", got)
	}
}
