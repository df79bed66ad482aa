package shapes

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Square is a Shape.
type Square struct {
	Side float64
}

// Area is the square's area.
func (s Square) Area() float64 { return s.Side * s.Side }

// NewSquare makes a square.
func NewSquare(side float64) Square { return Square{Side: side} }

// MaxSide bounds a square's side.
const MaxSide = 100.0

// DefaultSquare is the unit square.
var DefaultSquare = NewSquare(1)
