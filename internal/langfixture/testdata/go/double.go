package shapes

// Double is twice a rectangle's area.
func Double(w, h int) int { return 2 * Area(w, h) }
