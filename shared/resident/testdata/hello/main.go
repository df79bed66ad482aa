// Command hello is a static binary for the image tests.
package main

func main() { println("hello") }
