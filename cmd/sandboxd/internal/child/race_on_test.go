//go:build race

package child

// raceEnabled: the race detector's runtime, in a child under a memory
// limit, fails in words of its own ("ThreadSanitizer failed to
// allocate", "too many address space collisions for -race mode").
const raceEnabled = true
