// Package greet says hello.
package greet

// Greeting is what Hello says before a name.
const Greeting = "Hello, "

// Hello greets name.
func Hello(name string) string {
	return Greeting + name
}
