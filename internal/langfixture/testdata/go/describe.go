package shapes

import "fmt"

// Describe names a rectangle.
func Describe(w, h int) string { return fmt.Sprintf("%d x %d", w, h) }

func unusedHelper() int { return 0 }
