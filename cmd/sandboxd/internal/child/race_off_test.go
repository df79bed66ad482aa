//go:build !race

package child

const raceEnabled = false
