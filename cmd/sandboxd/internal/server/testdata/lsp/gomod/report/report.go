// Package report prints greetings.
package report

import (
	"fmt"

	"example.com/greeter/greet"
)

// Print prints line and the length of the greeting it starts with.
func Print(line string) {
	fmt.Println(line, len(greet.Greeting))
	_ = greet.Hello
}
