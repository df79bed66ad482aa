// Package calc is a fixture for per-test coverage: each test runs a
// different function.
package calc

// Add adds.
func Add(a, b int) int {
	return a + b
}

// Abs is the absolute value of n.
func Abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Unused runs in no test.
func Unused() int {
	return 42
}
