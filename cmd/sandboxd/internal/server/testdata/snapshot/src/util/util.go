package main

func util() string { return "util" }
