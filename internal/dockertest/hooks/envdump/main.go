// Command envdump prints its environment sorted, one KEY=value per line, so
// a test can compare what reached the process with what it asked for.
package main

import (
	"fmt"
	"os"
	"slices"
)

func main() {
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		fmt.Println(kv)
	}
}
