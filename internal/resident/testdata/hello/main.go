// Command hello is a static binary for the image tests.
package main

// greeting is set with -ldflags -X to make a second build.
var greeting = "hello"

func main() { println(greeting) }
