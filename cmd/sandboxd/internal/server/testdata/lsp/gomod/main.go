package main

import (
	"fmt"

	"example.com/greeter/greet"
	"example.com/greeter/report"
)

func main() {
	fmt.Println("héllo 😀", greet.Hello("world"))
	report.Print(greet.Hello("gopher"))
}
