package shapes

// Board is two squares side by side.
func Board(n int) int {
	return Square(n).Area() + Square(n+1).Area()
}
