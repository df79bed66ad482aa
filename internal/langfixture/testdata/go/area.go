package shapes

// Area is a rectangle's area.
func Area(w, h int) int { return w * h }
