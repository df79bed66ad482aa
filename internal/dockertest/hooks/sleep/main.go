// Command sleep prints its pid, then sleeps for argv[1] (a Go duration such
// as "30s", or a bare number of seconds). Printing the pid first lets a test
// look for the process after a timeout has fired.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sleep DURATION")
		os.Exit(2)
	}
	d, err := parse(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "sleep:", err)
		os.Exit(2)
	}
	fmt.Println(os.Getpid())
	time.Sleep(d)
}

func parse(s string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(secs * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}
