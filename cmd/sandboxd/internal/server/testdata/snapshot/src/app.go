package main

func main() { println(util()) }
