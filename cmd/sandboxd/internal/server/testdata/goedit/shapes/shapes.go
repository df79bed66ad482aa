// Package shapes is a fixture for the structural Go edit tools.
package shapes

// Rect is a rectangle.
type Rect struct{ W, H int }

// Area is the rectangle's area.
func (r Rect) Area() int {
	return r.W * r.H
}

// Scale grows the rectangle by k.
func (r *Rect) Scale(k int) {
	r.W *= k
	r.H *= k
}

// Square is a square rectangle of side n.
func Square(n int) Rect {
	return Rect{n, n}
}
